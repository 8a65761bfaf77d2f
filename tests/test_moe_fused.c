/* One MoE layer as the engines' fused kernels run it (sim/moe_fused.c): the collector's draws
 * (balanced shares, power-law sums, determinism, skew), the EP shard, the row-tile padding and
 * coverage, the grouped GEMMs' FLOPs and bytes worked by hand, the fp8-block scales, the
 * breakdown summing to the total, and the rejection of bad rows. A device built here, not a
 * spec from hw/, so that refits of the specs leave these numbers alone. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "ffnroof/moe_fused.h"

static ffn_hw test_hw(void)
{
    ffn_hw hw;
    memset(&hw, 0, sizeof hw);
    strcpy(hw.name, "test-gpu");
    hw.peak_flops[FFN_DT_FP32] = 6.7e13;
    hw.peak_flops[FFN_DT_BF16] = 9.9e14;
    hw.peak_flops[FFN_DT_FP8] = 1.98e15;
    hw.peak_flops[FFN_DT_FP8_BLOCK] = 1.98e15; /* as ffn_hw_load fills it from its unit's */
    hw.mem_bandwidth_bps = 3.35e12;
    hw.compute_units = 132;
    hw.eff.compute_max = 0.8;
    hw.eff.memory_max = 0.8;
    hw.eff.memory_max_elem = 0.9;
    hw.eff.launch_s = 2e-6;
    hw.eff.tiles[0][0] = 128;
    hw.eff.tiles[0][1] = 128;
    hw.eff.n_tiles = 1;
    return hw;
}

static ffn_aic_moe row_of(uint64_t T, uint64_t d, uint64_t f, uint32_t k, uint32_t E, uint32_t tp,
                          uint32_t ep, ffn_dtype dt)
{
    ffn_aic_moe r;
    memset(&r, 0, sizeof r);
    r.tokens = T;
    r.hidden = d;
    r.inter = f;
    r.topk = k;
    r.experts = E;
    r.tp = tp;
    r.ep = ep;
    r.wdtype = r.adtype = dt;
    r.draw = FFN_DRAW_BALANCED;
    return r;
}

static uint64_t sum_of(const uint64_t *c, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += c[i];
    return s;
}

Test(moe_fused, balanced_draw_gives_every_expert_exactly_its_share)
{
    uint64_t c[FFN_MOE_FUSED_MAX_EXPERTS];
    /* T >= s = ceil(E / k): token t takes (t + j s) mod E */
    const struct {
        uint64_t T;
        uint32_t k, E;
        uint64_t share;
    } cases[] = {{64, 8, 256, 2}, {32, 8, 256, 1}, {4, 2, 8, 1}, {1024, 6, 384, 16}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ffn_aic_moe r = row_of(cases[i].T, 1024, 512, cases[i].k, cases[i].E, 1, 1, FFN_DT_BF16);
        cr_assert_eq(ffn_moe_fused_draw(&r, 0, c, FFN_MOE_FUSED_MAX_EXPERTS), 0);
        for (uint32_t e = 0; e < cases[i].E; e++)
            cr_assert_eq(c[e], cases[i].share, "T %llu E %u expert %u: %llu copies",
                         (unsigned long long)cases[i].T, cases[i].E, e, (unsigned long long)c[e]);
    }
    /* T < s: token t takes floor(t s / T + j s) mod E; T = 4, s = 32: experts 8t + 32j, once */
    ffn_aic_moe r = row_of(4, 1024, 512, 8, 256, 1, 1, FFN_DT_BF16);
    cr_assert_eq(ffn_moe_fused_draw(&r, 0, c, FFN_MOE_FUSED_MAX_EXPERTS), 0);
    for (uint32_t e = 0; e < 256; e++)
        cr_assert_eq(c[e], e % 8 == 0 ? 1u : 0u, "expert %u", e);
    /* every shape sums to T k, the uneven ones too */
    const uint64_t Ts[] = {1, 3, 21, 22, 100, 1000, 16384};
    for (size_t i = 0; i < sizeof Ts / sizeof Ts[0]; i++) {
        r = row_of(Ts[i], 1024, 512, 6, 128, 1, 1, FFN_DT_BF16);
        cr_assert_eq(ffn_moe_fused_draw(&r, 0, c, FFN_MOE_FUSED_MAX_EXPERTS), 0);
        cr_assert_eq(sum_of(c, 128), Ts[i] * 6);
        r = row_of(Ts[i], 1024, 512, 10, 512, 1, 1, FFN_DT_BF16);
        cr_assert_eq(ffn_moe_fused_draw(&r, 0, c, FFN_MOE_FUSED_MAX_EXPERTS), 0);
        cr_assert_eq(sum_of(c, 512), Ts[i] * 10);
    }
}

static ffn_aic_moe power_row(uint64_t T, uint32_t k, uint32_t E, uint32_t ep, double alpha)
{
    ffn_aic_moe r = row_of(T, 1024, 512, k, E, 1, ep, FFN_DT_BF16);
    r.draw = FFN_DRAW_POWER_LAW;
    r.alpha = alpha;
    return r;
}

/* DeepSeek-V3's router (8 groups of 32, the best 4 kept) on the collector's balanced logits:
 * token t favours expert 32 g + t mod 32 in every group g, so the groups tie and the first four
 * are kept; the four favoured experts there, then the lowest other indices, 0-3 (0-4 less the
 * token's own when t mod 32 < 4). By hand at T = 1024: experts 0-3 take every token (1024), expert
 * 4 its 32 favoured tokens and the 128 with t mod 32 < 4, the other 123 experts of groups 0-3
 * their 32, groups 4-7 none. */
Test(moe_fused, grouped_balanced_draw_keeps_the_lowest_groups_and_experts_on_ties)
{
    ffn_aic_moe r = row_of(1024, 7168, 2048, 8, 256, 8, 1, FFN_DT_FP8_BLOCK);
    r.groups = 8;
    r.topk_groups = 4;
    uint64_t c[FFN_MOE_FUSED_MAX_EXPERTS];
    cr_assert_eq(ffn_moe_fused_draw(&r, 0, c, FFN_MOE_FUSED_MAX_EXPERTS), 0);
    uint64_t sum = 0;
    for (uint32_t e = 0; e < 256; e++) {
        const uint64_t want = e < 4 ? 1024 : e == 4 ? 160 : e < 128 ? 32 : 0;
        cr_assert_eq(c[e], want, "expert %u: %llu, want %llu", e, (unsigned long long)c[e],
                     (unsigned long long)want);
        sum += c[e];
    }
    cr_assert_eq(sum, 1024u * 8);
    /* below the stride (T < 32) every token still favours one expert a group: the four kept
     * groups, each token's picks distinct and all in experts 0-127 */
    r.tokens = 5;
    cr_assert_eq(ffn_moe_fused_draw(&r, 0, c, FFN_MOE_FUSED_MAX_EXPERTS), 0);
    sum = 0;
    for (uint32_t e = 0; e < 256; e++) {
        cr_assert(e < 128 || c[e] == 0, "expert %u of a dropped group: %llu", e,
                  (unsigned long long)c[e]);
        cr_assert_leq(c[e], 5u);
        sum += c[e];
    }
    cr_assert_eq(sum, 5u * 8);
    /* no groups, or every group kept: the plain draw */
    uint64_t plain[FFN_MOE_FUSED_MAX_EXPERTS];
    r.tokens = 1024;
    r.groups = 0;
    r.topk_groups = 0;
    cr_assert_eq(ffn_moe_fused_draw(&r, 0, plain, FFN_MOE_FUSED_MAX_EXPERTS), 0);
    r.groups = 8;
    r.topk_groups = 8;
    cr_assert_eq(ffn_moe_fused_draw(&r, 0, c, FFN_MOE_FUSED_MAX_EXPERTS), 0);
    cr_assert_eq(memcmp(c, plain, 256 * sizeof c[0]), 0);
    /* fewer experts in the kept groups than top-k: refused */
    r.topk_groups = 0;
    cr_assert_eq(ffn_moe_fused_check(&r), FFN_EINVAL);
    r.groups = 7; /* does not divide 256 */
    r.topk_groups = 4;
    cr_assert_eq(ffn_moe_fused_check(&r), FFN_EINVAL);
}

/* The power-law draw through the group-limited router: the tokens the collector assigns from
 * the counts route to the best groups of their own, so the copies keep their sum and stay at
 * most one a token per expert, move off the plain draw's experts (the groups a token drops hand
 * their copies to the lowest experts of those it keeps), and repeat for one seed. */
Test(moe_fused, grouped_power_law_draw_keeps_the_copies_and_moves_them)
{
    ffn_aic_moe r = row_of(1000, 7168, 2048, 8, 256, 8, 1, FFN_DT_FP8_BLOCK);
    r.draw = FFN_DRAW_POWER_LAW;
    r.alpha = 1.01;
    uint64_t plain[FFN_MOE_FUSED_MAX_EXPERTS], c[FFN_MOE_FUSED_MAX_EXPERTS],
        again[FFN_MOE_FUSED_MAX_EXPERTS];
    cr_assert_eq(ffn_moe_fused_draw(&r, 5, plain, FFN_MOE_FUSED_MAX_EXPERTS), 0);
    r.groups = 8;
    r.topk_groups = 4;
    cr_assert_eq(ffn_moe_fused_draw(&r, 5, c, FFN_MOE_FUSED_MAX_EXPERTS), 0);
    cr_assert_eq(ffn_moe_fused_draw(&r, 5, again, FFN_MOE_FUSED_MAX_EXPERTS), 0);
    cr_assert_eq(memcmp(c, again, 256 * sizeof c[0]), 0, "one seed, one draw");
    uint64_t sum = 0, moved = 0;
    for (uint32_t e = 0; e < 256; e++) {
        cr_assert_leq(c[e], 1000u, "expert %u", e);
        sum += c[e];
        moved += c[e] > plain[e] ? c[e] - plain[e] : 0;
    }
    cr_assert_eq(sum, 8000u);
    cr_assert_gt(moved, 0u, "some tokens' groups are dropped");
    /* the lowest expert of the kept groups gains the most: group 0's expert 0 is a tie-fill of
     * every token that keeps group 0 without favouring it */
    cr_expect_geq(c[0], plain[0]);
}

Test(moe_fused, power_law_draw_sums_to_copies_and_caps_each_expert_at_the_tokens)
{
    uint64_t c[FFN_MOE_FUSED_MAX_EXPERTS];
    const uint64_t Ts[] = {1, 2, 3, 8, 64, 1000, 16384};
    const uint32_t Es[] = {8, 16, 128, 256, 512};
    const double alphas[] = {1.01, 1.2, 3.0};
    for (size_t i = 0; i < sizeof Ts / sizeof Ts[0]; i++)
        for (size_t j = 0; j < sizeof Es / sizeof Es[0]; j++)
            for (size_t a = 0; a < sizeof alphas / sizeof alphas[0]; a++) {
                const uint32_t k = Es[j] >= 8 ? 8 : 2;
                ffn_aic_moe r = power_row(Ts[i], k, Es[j], 1, alphas[a]);
                cr_assert_eq(ffn_moe_fused_draw(&r, 7, c, FFN_MOE_FUSED_MAX_EXPERTS), 0);
                cr_assert_eq(sum_of(c, Es[j]), Ts[i] * k, "T %llu E %u alpha %g",
                             (unsigned long long)Ts[i], Es[j], alphas[a]);
                for (uint32_t e = 0; e < Es[j]; e++)
                    cr_assert_leq(c[e], Ts[i], "an expert takes a token at most once");
            }
}

Test(moe_fused, power_law_draw_is_deterministic_per_seed)
{
    uint64_t a[256], b[256];
    ffn_aic_moe r = power_row(1024, 8, 256, 1, 1.2);
    cr_assert_eq(ffn_moe_fused_draw(&r, 42, a, 256), 0);
    cr_assert_eq(ffn_moe_fused_draw(&r, 42, b, 256), 0);
    cr_assert_eq(memcmp(a, b, sizeof a), 0);
    cr_assert_eq(ffn_moe_fused_draw(&r, 43, b, 256), 0);
    cr_assert_neq(memcmp(a, b, sizeof a), 0);
    /* the prediction averages seeds seed .. seed + draws - 1: the same numbers twice */
    ffn_hw hw = test_hw();
    ffn_moe_fused_cost x, y;
    cr_assert_eq(ffn_moe_fused_predict(&hw, &r, NULL, &x), 0);
    cr_assert_eq(ffn_moe_fused_predict(&hw, &r, NULL, &y), 0);
    cr_assert_eq(x.time_s, y.time_s);
}

/* The share of all copies on the busiest fifth of the experts, over 16 seeds. */
static double top_fifth_share(double alpha)
{
    double share = 0;
    for (uint64_t seed = 0; seed < 16; seed++) {
        uint64_t c[256];
        ffn_aic_moe r = power_row(4096, 8, 256, 1, alpha);
        cr_assert_eq(ffn_moe_fused_draw(&r, seed, c, 256), 0);
        /* the 51 largest by selection */
        uint64_t top = 0;
        for (int i = 0; i < 51; i++) {
            int best = 0;
            for (int e = 1; e < 256; e++)
                if (c[e] > c[best]) best = e;
            top += c[best];
            c[best] = 0;
        }
        share += (double)top / (4096.0 * 8.0) / 16.0;
    }
    return share;
}

/* Over the collector's exponents (1.01 and 1.2, docs/POWER_LAW_DISTRIBUTION.md of
 * aiconfigurator): the counts are samples on [1, 0.8 T], so a much larger alpha lightens the
 * tail again; the claim is for the range the tables use. */
Test(moe_fused, power_law_draw_is_more_skewed_for_larger_alpha)
{
    const double s101 = top_fifth_share(1.01), s11 = top_fifth_share(1.1),
                 s12 = top_fifth_share(1.2);
    cr_assert_gt(s101, 0.2, "already skewed at 1.01: %g", s101);
    cr_assert_gt(s11, s101, "1.1 %g vs 1.01 %g", s11, s101);
    cr_assert_gt(s12, s11, "1.2 %g vs 1.1 %g", s12, s11);
}

Test(moe_fused, ep_takes_the_busiest_group_of_experts_over_ep)
{
    ffn_hw hw = test_hw();
    uint64_t c[64];
    for (uint64_t seed = 0; seed < 8; seed++) {
        ffn_aic_moe r = power_row(512, 4, 64, 8, 1.2);
        cr_assert_eq(ffn_moe_fused_draw(&r, seed, c, 64), 0);
        const uint64_t g0 = sum_of(c, 8);
        for (int g = 1; g < 8; g++)
            cr_assert_geq(g0, sum_of(c + 8 * g, 8), "group %d busier than rank 0's", g);
        ffn_moe_fused_cost out;
        cr_assert_eq(ffn_moe_fused_cost_counts(&hw, &r, c, 64, NULL, &out), 0);
        cr_assert_eq(out.local_experts, 8u);
        cr_assert_eq(out.local_copies, (double)g0);
    }
    /* balanced: 64 tokens x 4 over 64 experts, 4 each; a quarter of them is the shard's */
    ffn_aic_moe r = row_of(64, 1024, 512, 4, 64, 1, 4, FFN_DT_BF16);
    ffn_moe_fused_cost out;
    cr_assert_eq(ffn_moe_fused_predict(&hw, &r, NULL, &out), 0);
    cr_assert_eq(out.local_experts, 16u);
    cr_assert_eq(out.local_copies, 64.0);
    cr_assert_eq(out.active_experts, 16.0);
}

Test(moe_fused, rows_are_padded_to_the_row_tile_per_active_expert)
{
    ffn_hw hw = test_hw();
    /* 8 experts, 131 copies: 5 active; tiles of 16: 1 + 2 + 1 + 3 + 4 = 11, 176 rows */
    const uint64_t c[8] = {0, 1, 17, 16, 0, 33, 64, 0};
    ffn_aic_moe r = row_of(131, 256, 128, 1, 8, 1, 1, FFN_DT_BF16);
    ffn_moe_fused_opts o;
    ffn_moe_fused_opts_default(&o);
    o.block_m = 16;
    ffn_moe_fused_cost out;
    cr_assert_eq(ffn_moe_fused_cost_counts(&hw, &r, c, 8, &o, &out), 0);
    cr_assert_eq(out.active_experts, 5.0);
    cr_assert_eq(out.padded_rows, 176.0);
    cr_assert_eq(out.max_expert_tokens, 64.0);
    cr_assert_eq(out.gate_up.instances, 11u);
    /* tiles of 32: 1 + 1 + 1 + 2 + 2 = 7, 224 rows */
    o.block_m = 32;
    cr_assert_eq(ffn_moe_fused_cost_counts(&hw, &r, c, 8, &o, &out), 0);
    cr_assert_eq(out.padded_rows, 224.0);
    /* the default tile: a mean of 131 / 5 = 26.2 rows per active expert takes 16 */
    o.block_m = 0;
    cr_assert_eq(ffn_moe_fused_cost_counts(&hw, &r, c, 8, &o, &out), 0);
    cr_assert_eq(out.block_m, 16u);
    cr_assert_eq(ffn_moe_fused_block_m(1), 16u);
    cr_assert_eq(ffn_moe_fused_block_m(31.9), 16u);
    cr_assert_eq(ffn_moe_fused_block_m(32), 32u);
    cr_assert_eq(ffn_moe_fused_block_m(127), 64u);
    cr_assert_eq(ffn_moe_fused_block_m(4096), 64u);
}

Test(moe_fused, bf16_grouped_gemms_count_flops_and_bytes_by_hand)
{
    ffn_hw hw = test_hw();
    /* d 128, f 64, 4 experts, top-1, 48 tokens: 16 and 32 copies on two experts */
    const uint64_t c[4] = {16, 0, 32, 0};
    ffn_aic_moe r = row_of(48, 128, 64, 1, 4, 1, 1, FFN_DT_BF16);
    ffn_moe_fused_opts o;
    ffn_moe_fused_opts_default(&o);
    o.block_m = 16;
    ffn_moe_fused_cost out;
    cr_assert_eq(ffn_moe_fused_cost_counts(&hw, &r, c, 4, &o, &out), 0);
    /* gate_up [48 padded rows, 128] x [128, 128]: 2 x 48 x 128 x 128 FLOPs; two experts'
     * weights, 128 x 128 x 2 B each, and 48 copies' input row (128 x 2 B) and output row
     * (128 x 2 B) */
    cr_assert_float_eq(out.gate_up.flops, 2.0 * 48 * 128 * 128, 1e-6);
    cr_assert_float_eq(out.gate_up.weight_bytes, 2.0 * 128 * 128 * 2, 1e-9);
    cr_assert_float_eq(out.gate_up.bytes, 65536.0 + 48.0 * (256 + 256), 1e-9);
    /* down [48, 64] x [64, 128] */
    cr_assert_float_eq(out.down.flops, 2.0 * 48 * 128 * 64, 1e-6);
    cr_assert_float_eq(out.down.bytes, 2.0 * 64 * 128 * 2 + 48.0 * (128 + 256), 1e-9);
    cr_assert_float_eq(out.weight_bytes, 65536.0 + 32768.0, 1e-9);
    cr_assert_float_eq(out.gemm_flops, out.gate_up.flops + out.down.flops, 1e-6);
    /* non-gated experts: one up projection, half the gate_up weights and FLOPs */
    o.nongated = true;
    cr_assert_eq(ffn_moe_fused_cost_counts(&hw, &r, c, 4, &o, &out), 0);
    cr_assert_float_eq(out.gate_up.flops, 2.0 * 48 * 64 * 128, 1e-6);
    cr_assert_float_eq(out.gate_up.weight_bytes, 2.0 * 128 * 64 * 2, 1e-9);
}

Test(moe_fused, fp8_block_moves_more_bytes_than_fp8_by_its_scales)
{
    ffn_hw hw = test_hw();
    /* d 256, f 256: gate_up [256, 512] has 2 x 4 blocks of 128 x 128, down [256, 256] 2 x 2,
     * one fp32 scale each: 48 B an expert; each copy's input rows carry one fp32 scale per 128
     * values: 256 x 4 / 128 = 8 B per GEMM */
    const uint64_t c[4] = {16, 0, 32, 5};
    ffn_aic_moe a = row_of(53, 256, 256, 1, 4, 1, 1, FFN_DT_FP8);
    ffn_aic_moe b = row_of(53, 256, 256, 1, 4, 1, 1, FFN_DT_FP8_BLOCK);
    ffn_moe_fused_cost ca, cb;
    cr_assert_eq(ffn_moe_fused_cost_counts(&hw, &a, c, 4, NULL, &ca), 0);
    cr_assert_eq(ffn_moe_fused_cost_counts(&hw, &b, c, 4, NULL, &cb), 0);
    cr_assert_float_eq(cb.weight_bytes - ca.weight_bytes, 3.0 * 48, 1e-9);
    cr_assert_float_eq(cb.gemm_bytes - ca.gemm_bytes, 3.0 * 48 + 53.0 * 16, 1e-9);
    /* both multiply on the fp8 units and quantise their activations */
    cr_assert_eq(ffn_dtype_unit(cb.gate_up.compute_dtype), FFN_DT_FP8);
    cr_assert_eq(ffn_dtype_unit(ca.gate_up.compute_dtype), FFN_DT_FP8);
    cr_assert_gt(cb.kernel_s[FFN_MF_QUANT_IN], 0);
    cr_assert_gt(cb.kernel_s[FFN_MF_QUANT_MID], 0);
    /* bf16 does not */
    ffn_aic_moe h = row_of(53, 256, 256, 1, 4, 1, 1, FFN_DT_BF16);
    ffn_moe_fused_cost ch;
    cr_assert_eq(ffn_moe_fused_cost_counts(&hw, &h, c, 4, NULL, &ch), 0);
    cr_assert_eq(ch.kernel_s[FFN_MF_QUANT_IN], 0);
}

Test(moe_fused, total_is_the_sum_of_the_kernels)
{
    ffn_hw hw = test_hw();
    const ffn_dtype dts[] = {FFN_DT_BF16, FFN_DT_FP8, FFN_DT_FP8_BLOCK, FFN_DT_INT4, FFN_DT_MXFP4};
    const ffn_engine engines[] = {FFN_ENGINE_VLLM, FFN_ENGINE_TRTLLM};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++)
        for (size_t e = 0; e < 2; e++)
            for (uint32_t ep = 1; ep <= 8; ep *= 8) {
                ffn_aic_moe r = power_row(777, 8, 128, ep, 1.2);
                r.hidden = 2048;
                r.inter = 768;
                r.wdtype = dts[i];
                r.adtype = dts[i] == FFN_DT_INT4 || dts[i] == FFN_DT_MXFP4 ? FFN_DT_BF16 : dts[i];
                ffn_moe_fused_opts o;
                ffn_moe_fused_opts_default(&o);
                o.engine = engines[e];
                ffn_moe_fused_cost out;
                cr_assert_eq(ffn_moe_fused_predict(&hw, &r, &o, &out), 0);
                double s = 0;
                for (int k = 0; k < FFN_MF_COUNT; k++) {
                    cr_assert_geq(out.kernel_s[k], 0);
                    s += out.kernel_s[k];
                }
                cr_assert_float_eq(out.time_s, s, 1e-12 * s, "dtype %d engine %d", (int)dts[i],
                                   (int)engines[e]);
                cr_assert_gt(out.kernel_s[FFN_MF_GATE_UP], 0);
                cr_assert_gt(out.kernel_s[FFN_MF_DOWN], 0);
            }
}

Test(moe_fused, the_many_rows_function_matches_one_by_one)
{
    ffn_hw hw = test_hw();
    ffn_aic_moe rows[4] = {row_of(1, 4096, 1536, 8, 128, 1, 1, FFN_DT_BF16),
                           power_row(300, 8, 256, 4, 1.01),
                           row_of(16384, 7168, 2048, 8, 256, 1, 1, FFN_DT_FP8_BLOCK),
                           row_of(5, 2880, 2880, 4, 32, 1, 1, FFN_DT_BF16)};
    rows[3].wdtype = FFN_DT_MXFP4;
    double t[4];
    cr_assert_eq(ffn_moe_fused_predict_many(&hw, rows, 4, NULL, t, NULL), 0);
    for (int i = 0; i < 4; i++) {
        ffn_moe_fused_cost c;
        cr_assert_eq(ffn_moe_fused_predict(&hw, &rows[i], NULL, &c), 0);
        cr_assert_eq(t[i], c.time_s);
        cr_assert(isfinite(t[i]) && t[i] > 0);
    }
}

Test(moe_fused, bad_rows_are_refused)
{
    ffn_hw hw = test_hw();
    ffn_moe_fused_cost out;
    uint64_t c[FFN_MOE_FUSED_MAX_EXPERTS];
    ffn_aic_moe good = row_of(16, 1024, 512, 2, 8, 1, 1, FFN_DT_BF16);
    cr_assert_eq(ffn_moe_fused_predict(&hw, &good, NULL, &out), 0);
    ffn_aic_moe bad[9];
    for (int i = 0; i < 9; i++)
        bad[i] = good;
    bad[0].experts = 0;
    bad[1].topk = 9; /* above the experts */
    bad[2].ep = 3;   /* does not divide 8 experts */
    bad[3].tokens = 0;
    bad[4].topk = 0;
    bad[5].tp = 3; /* does not divide 512 */
    bad[6].experts = FFN_MOE_FUSED_MAX_EXPERTS * 2;
    bad[6].ep = 1;
    bad[7].draw = FFN_DRAW_POWER_LAW; /* alpha 0 */
    bad[8].ep = 0;
    for (int i = 0; i < 9; i++) {
        cr_assert_eq(ffn_moe_fused_check(&bad[i]), FFN_EINVAL, "row %d", i);
        cr_assert_eq(ffn_moe_fused_predict(&hw, &bad[i], NULL, &out), FFN_EINVAL, "row %d", i);
        cr_assert_eq(ffn_moe_fused_draw(&bad[i], 0, c, FFN_MOE_FUSED_MAX_EXPERTS), FFN_EINVAL);
    }
    cr_assert_eq(ffn_moe_fused_check(NULL), FFN_EINVAL);
    cr_assert_eq(ffn_moe_fused_predict(NULL, &good, NULL, &out), FFN_EINVAL);
    cr_assert_eq(ffn_moe_fused_draw(&good, 0, c, 4), FFN_EINVAL, "counts shorter than experts");
    /* the many-rows function marks the refused row and names the first */
    ffn_aic_moe rows[3] = {good, bad[2], bad[0]};
    double t[3];
    size_t first = 99;
    cr_assert_eq(ffn_moe_fused_predict_many(&hw, rows, 3, NULL, t, &first), FFN_EINVAL);
    cr_assert_eq(first, 1u);
    cr_assert(isfinite(t[0]));
    cr_assert(isnan(t[1]) && isnan(t[2]));
}

Test(moe_fused, trtllm_runs_the_elementwise_kernels_on_the_shard_copies_only)
{
    ffn_hw hw = test_hw();
    ffn_aic_moe r = row_of(4096, 4096, 1536, 8, 128, 1, 8, FFN_DT_BF16);
    ffn_moe_fused_opts o;
    ffn_moe_fused_opts_default(&o);
    ffn_moe_fused_cost v, t;
    cr_assert_eq(ffn_moe_fused_predict(&hw, &r, &o, &v), 0);
    o.engine = FFN_ENGINE_TRTLLM;
    cr_assert_eq(ffn_moe_fused_predict(&hw, &r, &o, &t), 0);
    /* an eighth of the copies: the activation moves an eighth of the bytes */
    cr_assert_lt(t.kernel_s[FFN_MF_ACT], v.kernel_s[FFN_MF_ACT] / 4);
    cr_assert_eq(t.local_copies, v.local_copies);
    cr_assert_lt(t.time_s, v.time_s);
}
