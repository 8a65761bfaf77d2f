/* One MoE layer as the engines' fused MoE modules run it on a GPU (include/ffnroof/moe_fused.h):
 * the collector's token-per-expert draws (balanced, power-law), the EP shard, the row tile
 * padding, two grouped GEMMs through the simulator's GEMM cost (sim/cost.c) with the module's
 * latency floor, and the small kernels around them. Equations, sources and the fit of the
 * default parameters: docs/model.md, "MoE layers as fused kernels". */
#include "ffnroof/moe_fused.h"
#include "ffnroof/rand.h"

#include <math.h>
#include <string.h>

#define MAX_E FFN_MOE_FUSED_MAX_EXPERTS

static const char *const kernel_names[FFN_MF_COUNT] = {
    [FFN_MF_ROUTER] = "router",   [FFN_MF_ALIGN] = "align",     [FFN_MF_QUANT_IN] = "quant_in",
    [FFN_MF_GATE_UP] = "gate_up", [FFN_MF_ACT] = "act",         [FFN_MF_QUANT_MID] = "quant_mid",
    [FFN_MF_DOWN] = "down",       [FFN_MF_COMBINE] = "combine", [FFN_MF_MODULE] = "module",
};

const char *ffn_moe_fused_kernel_name(ffn_moe_fused_kernel k)
{
    return (unsigned)k < FFN_MF_COUNT ? kernel_names[k] : NULL;
}

/* Fitted by Nelder-Mead on the mean |log(predicted / measured)| over aiconfigurator's H100 SXM
 * vLLM 0.24 table (data/calib/aic-h100_sxm_moe_vllm_0.24.0_moe), the Triton rows of each
 * activation class (every third of the 16253 bf16 rows, the 5988 fp8-block rows; docs/model.md)
 * against hw/h100-sxm.yaml; bench/bench_fit_moe_fused refits them. The fp8 set takes
 * zero_tile_s, ep_s and misaligned_x from the bf16 one: its rows have no EP and no misaligned
 * shard. */
static const ffn_moe_fused_params params_bf16 = {
    .module_s = 16.06e-6,
    .gemm_eff = 0.975,
    .tile_s = 0.6791e-6,
    .kstep_s = 0.135e-6,
    .zero_tile_s = 0.2535e-6,
    .ep_s = 7.215e-6,
    .misaligned_x = 3.516,
};
static const ffn_moe_fused_params params_fp8 = {
    .module_s = 18.73e-6,
    .gemm_eff = 0.6467,
    .tile_s = 1.513e-6,
    .kstep_s = 0.3995e-6,
    .zero_tile_s = 0.2535e-6,
    .ep_s = 7.215e-6,
    .misaligned_x = 3.516,
};

const ffn_moe_fused_params *ffn_moe_fused_default_params(ffn_dtype adtype)
{
    return ffn_dtype_bits(ffn_dtype_unit(adtype)) < 16 ? &params_fp8 : &params_bf16;
}

void ffn_moe_fused_opts_default(ffn_moe_fused_opts *o)
{
    memset(o, 0, sizeof *o);
    o->draws = FFN_MOE_FUSED_DRAWS;
    o->engine = FFN_ENGINE_VLLM;
    o->weights = FFN_WEIGHTS_AUTO;
}

int ffn_moe_fused_check(const ffn_aic_moe *row)
{
    if (!row || row->tokens == 0 || row->hidden == 0 || row->inter == 0) return FFN_EINVAL;
    if (row->experts == 0 || row->experts > MAX_E) return FFN_EINVAL;
    if (row->topk == 0 || row->topk > row->experts) return FFN_EINVAL;
    if (row->tp == 0 || row->inter % row->tp != 0) return FFN_EINVAL;
    if (row->ep == 0 || row->experts % row->ep != 0) return FFN_EINVAL;
    /* keeps T k and every sum of counts far inside uint64_t */
    if (row->tokens > (UINT64_C(1) << 32)) return FFN_EINVAL;
    if (row->groups && (row->groups > row->experts || row->experts % row->groups ||
                        !row->topk_groups || row->topk_groups > row->groups ||
                        row->topk > (uint64_t)row->topk_groups * (row->experts / row->groups)))
        return FFN_EINVAL;
    if (row->draw == FFN_DRAW_BALANCED) return 0;
    if (row->draw != FFN_DRAW_POWER_LAW) return FFN_EINVAL;
    return row->alpha > 0 && isfinite(row->alpha) ? 0 : FFN_EINVAL;
}

unsigned ffn_moe_fused_block_m(double rows_per_expert)
{
    unsigned bm = 16;
    while (bm < 64 && rows_per_expert >= 2.0 * bm)
        bm *= 2;
    return bm;
}

/* ---- the collector's draws (aiconfigurator collector/helper.py) ------------------------- */

/* Round a float to bfloat16, to nearest even: the collector's balanced draw divides in the
 * default dtype, which its vLLM collector sets to bf16 (run_moe_torch,
 * torch.set_default_dtype). */
static float bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* balanced_logits: s = ceil(E / k); token t takes experts (t + j s) mod E, j < k, when T >= s,
 * else floor(t s / T + j s) mod E computed in bf16. The T >= s case is counted in closed form:
 * offset a = j s spreads T consecutive tokens over the experts, each floor(T / E) times plus
 * one for the (T mod E) experts from a on. */
static void draw_balanced(uint64_t T, uint32_t E, uint32_t k, uint64_t *c)
{
    const uint64_t s = ((uint64_t)E + k - 1) / k;
    memset(c, 0, (size_t)E * sizeof *c);
    if (T >= s) {
        const uint64_t full = T / E, rem = T % E;
        for (uint32_t j = 0; j < k; j++) {
            const uint64_t a = (j * s) % E;
            for (uint32_t e = 0; e < E; e++)
                c[e] += full + (((uint64_t)e + E - a) % E < rem ? 1 : 0);
        }
        return;
    }
    for (uint64_t t = 0; t < T; t++) {
        const float q = bf16(bf16((float)(t * s)) / (float)T);
        for (uint32_t j = 0; j < k; j++) {
            const float v = bf16(q + bf16((float)(j * s)));
            const float r = bf16(fmodf(v, (float)E));
            c[(uint64_t)r % E]++;
        }
    }
}

/* Token t's favoured experts under balanced_logits (above) into fav (E flags). */
static void favoured(uint64_t t, uint64_t T, uint32_t E, uint32_t k, bool *fav)
{
    const uint64_t s = ((uint64_t)E + k - 1) / k;
    memset(fav, 0, (size_t)E * sizeof *fav);
    if (T >= s) {
        for (uint32_t j = 0; j < k; j++)
            fav[(t + j * s) % E] = true;
        return;
    }
    const float q = bf16(bf16((float)(t * s)) / (float)T);
    for (uint32_t j = 0; j < k; j++) {
        const float v = bf16(q + bf16((float)(j * s)));
        fav[(uint64_t)bf16(fmodf(v, (float)E)) % E] = true;
    }
}

/* One token through the group-limited router: its favoured experts fav (E flags), each group
 * scored by how many of them it holds (the sum of its two best scores: 2, 1 or 0 favoured), the
 * best G' of the G groups kept, then the favoured experts of those and the lowest other indices
 * there until k; mult copies added to each pick in c. */
static void route_grouped(const bool *fav, uint32_t E, uint32_t k, uint32_t G, uint32_t Gk,
                          uint64_t mult, uint64_t *c)
{
    const uint32_t per = E / G;
    unsigned score[MAX_E];
    bool keep[MAX_E];
    for (uint32_t g = 0; g < G; g++) {
        unsigned f = 0;
        for (uint32_t e = g * per; e < (g + 1) * per && f < 2; e++)
            f += fav[e];
        score[g] = f;
        keep[g] = false;
    }
    for (uint32_t n = 0; n < Gk; n++) {
        uint32_t best = G;
        for (uint32_t g = 0; g < G; g++)
            if (!keep[g] && (best == G || score[g] > score[best])) best = g;
        keep[best] = true;
    }
    uint32_t taken = 0;
    for (int pass = 0; pass < 2 && taken < k; pass++)
        for (uint32_t e = 0; e < E && taken < k; e++)
            if (keep[e / per] && fav[e] == (pass == 0)) {
                c[e] += mult;
                taken++;
            }
}

/* balanced_logits through a group-limited top-k router, as vLLM's and SGLang's collectors build
 * DeepSeek-V3's (sigmoid scores, a zero correction bias, each group scored by the sum of its two
 * best, the best G' of the G groups kept, the best k experts of those): a token's favoured
 * experts score alike and every other expert alike below them, so groups holding as many of
 * them (counted up to two) tie, and the ties go to the lowest index, groups and experts alike.
 * The tables show it: the balanced rows of DeepSeek-V3's shape time the weights of about half
 * the experts, and under EP they load rank 0, which holds the lowest experts, with every token.
 * For T >= s a token's choice depends on t mod E alone: each residue is priced once and counted
 * as often as it occurs. */
static void draw_balanced_grouped(uint64_t T, uint32_t E, uint32_t k, uint32_t G, uint32_t Gk,
                                  uint64_t *c)
{
    const uint64_t s = ((uint64_t)E + k - 1) / k;
    memset(c, 0, (size_t)E * sizeof *c);
    const uint64_t n_t = T >= s ? (T < E ? T : E) : T;
    bool fav[MAX_E];
    for (uint64_t t = 0; t < n_t; t++) {
        const uint64_t mult = T >= s ? T / E + (t < T % E ? 1 : 0) : 1;
        if (!mult) continue;
        favoured(t, T, E, k, fav);
        route_grouped(fav, E, k, G, Gk, mult, c);
    }
}

/* sample_power_law: inverse CDF of p(x) ~ x^-alpha on [lo, hi] (the collector's
 * docs/POWER_LAW_DISTRIBUTION.md); alpha = 1 is its log-uniform limit. */
static double power_law_sample(double u, double alpha, double lo, double hi)
{
    if (fabs(alpha - 1.0) < 1e-12) return lo * pow(hi / lo, u);
    const double a = 1.0 - alpha;
    return pow((pow(hi, a) - pow(lo, a)) * u + pow(lo, a), 1.0 / a);
}

/* sum over i of max(0, L - c_i) */
static uint64_t deficit(const uint64_t *c, size_t m, uint64_t L)
{
    uint64_t g = 0;
    for (size_t i = 0; i < m; i++)
        g += c[i] < L ? L - c[i] : 0;
    return g;
}

/* sum over i of max(0, c_i - L) */
static uint64_t excess(const uint64_t *c, size_t m, uint64_t L)
{
    uint64_t h = 0;
    for (size_t i = 0; i < m; i++)
        h += c[i] > L ? c[i] - L : 0;
    return h;
}

/* n single-unit increments, each to the smallest entry below cap (the first on ties, as
 * torch.argmin picks): every entry is raised to a level L and what is left goes +1 to the
 * first entries at L. */
static void fill_up(uint64_t *c, size_t m, uint64_t cap, uint64_t n)
{
    uint64_t lo = 0, hi = cap;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo + 1) / 2;
        if (deficit(c, m, mid) <= n)
            lo = mid;
        else
            hi = mid - 1;
    }
    uint64_t left = n - deficit(c, m, lo);
    for (size_t i = 0; i < m; i++)
        if (c[i] < lo) c[i] = lo;
    for (size_t i = 0; i < m && left > 0 && lo < cap; i++)
        if (c[i] == lo) c[i]++, left--;
}

/* n single-unit decrements, each from the largest entry (the first on ties, torch.argmax),
 * never below 0. */
static void fill_down(uint64_t *c, size_t m, uint64_t n)
{
    uint64_t lo = 0, hi = 0;
    for (size_t i = 0; i < m; i++)
        hi = c[i] > hi ? c[i] : hi;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (excess(c, m, mid) <= n)
            hi = mid;
        else
            lo = mid + 1;
    }
    uint64_t left = n - excess(c, m, lo);
    for (size_t i = 0; i < m; i++)
        if (c[i] > lo) c[i] = lo;
    for (size_t i = 0; i < m && left > 0 && lo > 0; i++)
        if (c[i] == lo) c[i]--, left--;
}

/* _round_robin_adjust_per_rank: n units handed out one per EP rank in rank order, pass after
 * pass, to the ranks that can still take one (cap[r]); within a rank by fill_up / fill_down.
 * After P full passes rank r holds min(cap[r], P); the rest go to the first ranks above P. */
static void round_robin(uint64_t *c, uint32_t E, uint32_t ep, uint64_t T, uint64_t n, bool up)
{
    const uint32_t m = E / ep;
    uint64_t cap[MAX_E], total = 0;
    for (uint32_t r = 0; r < ep; r++) {
        cap[r] = 0;
        for (uint32_t i = r * m; i < (r + 1) * m; i++)
            cap[r] += up ? T - c[i] : c[i];
        total += cap[r];
    }
    if (n > total) n = total;
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo + 1) / 2;
        uint64_t f = 0;
        for (uint32_t r = 0; r < ep; r++)
            f += cap[r] < mid ? cap[r] : mid;
        if (f <= n)
            lo = mid;
        else
            hi = mid - 1;
    }
    uint64_t left = n;
    for (uint32_t r = 0; r < ep; r++)
        left -= cap[r] < lo ? cap[r] : lo;
    for (uint32_t r = 0; r < ep; r++) {
        uint64_t nr = cap[r] < lo ? cap[r] : lo;
        if (cap[r] > lo && left > 0) nr++, left--;
        if (up)
            fill_up(c + (size_t)r * m, m, T, nr);
        else
            fill_down(c + (size_t)r * m, m, nr);
    }
}

/* Swap the group of experts / ep experts with the most copies (the first of equals) into EP
 * rank 0's place. */
static void busiest_to_rank0(uint64_t *c, uint32_t E, uint32_t ep)
{
    const uint32_t m = E / ep;
    uint32_t best = 0;
    uint64_t best_sum = 0;
    for (uint32_t r = 0; r < ep; r++) {
        uint64_t s = 0;
        for (uint32_t i = r * m; i < (r + 1) * m; i++)
            s += c[i];
        if (r == 0 || s > best_sum) best = r, best_sum = s;
    }
    for (uint32_t i = 0; best && i < m; i++) {
        const uint64_t t = c[i];
        c[i] = c[best * m + i];
        c[best * m + i] = t;
    }
}

/* The power-law draw's tokens through the group-limited router: the collector assigns each
 * token its experts from the counts (_assign_experts_from_counts: the experts sorted by count,
 * most first, each repeated its count times, read column-major, so token t takes the entries
 * t, t + T, .., t + (k-1) T) and the module routes those logits like the balanced ones
 * (route_grouped). Equal counts are taken in index order (numpy's argsort of the collector does
 * not keep a defined order for ties). Tokens whose k entries fall in the same runs of experts
 * route alike: the at most E points where an entry crosses into the next expert split [0, T)
 * into runs priced once each. */
static void reroute_power_law(const ffn_aic_moe *row, uint64_t *c)
{
    const uint64_t T = row->tokens;
    const uint32_t E = row->experts, k = row->topk;
    uint32_t ord[MAX_E];
    for (uint32_t e = 0; e < E; e++)
        ord[e] = e;
    for (uint32_t i = 1; i < E; i++) { /* insertion sort: most copies first, index on ties */
        const uint32_t x = ord[i];
        uint32_t j = i;
        while (j > 0 && c[ord[j - 1]] < c[x]) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = x;
    }
    uint64_t start[MAX_E + 1];
    start[0] = 0;
    for (uint32_t i = 0; i < E; i++)
        start[i + 1] = start[i] + c[ord[i]];
    /* the tokens where some entry t + j T reaches the start of the next expert */
    uint64_t cut[MAX_E + 2];
    size_t n = 0;
    cut[n++] = 0;
    for (uint32_t i = 1; i < E; i++)
        if (start[i] < T * k && start[i] % T) cut[n++] = start[i] % T;
    cut[n++] = T;
    for (size_t i = 1; i < n; i++) { /* sort the few cuts */
        const uint64_t x = cut[i];
        size_t j = i;
        while (j > 0 && cut[j - 1] > x) {
            cut[j] = cut[j - 1];
            j--;
        }
        cut[j] = x;
    }
    uint64_t out[MAX_E] = {0};
    bool fav[MAX_E];
    for (size_t r = 0; r + 1 < n; r++) {
        const uint64_t a = cut[r], b = cut[r + 1];
        if (b <= a) continue;
        memset(fav, 0, (size_t)E * sizeof *fav);
        uint32_t i = 0;
        for (uint32_t j = 0; j < k; j++) {
            const uint64_t pos = a + (uint64_t)j * T;
            while (i + 1 < E && start[i + 1] <= pos)
                i++;
            fav[ord[i]] = true;
        }
        route_grouped(fav, E, k, row->groups, row->topk_groups, b - a, out);
    }
    memcpy(c, out, (size_t)E * sizeof *c);
}

/* _generate_power_law_distribution: E samples on [1, 0.8 T] (on [0.01, 2] when T k <= E),
 * scaled to sum T k and rounded half to even (torch.round), clamped at T with the overflow
 * handed back round-robin, the sum made exact round-robin, the busiest group to rank 0;
 * through the group-limited router where the row has one (reroute_power_law). */
static void draw_power_law(const ffn_aic_moe *row, uint64_t seed, uint64_t *c)
{
    const uint64_t T = row->tokens, target = T * row->topk;
    const uint32_t E = row->experts;
    const bool many = target > E;
    const double lo = many ? 1.0 : 0.01, hi = many ? 0.8 * (double)T : 2.0;
    double x[MAX_E], sum = 0;
    ffn_rng r;
    ffn_rng_seed(&r, seed);
    for (uint32_t e = 0; e < E; e++) {
        x[e] = power_law_sample(ffn_rng_unif(&r), row->alpha, lo, hi);
        sum += x[e];
    }
    uint64_t overflow = 0, total = 0;
    for (uint32_t e = 0; e < E; e++) {
        c[e] = (uint64_t)nearbyint(x[e] / sum * (double)target);
        if (c[e] > T) overflow += c[e] - T, c[e] = T;
    }
    if (overflow) round_robin(c, E, row->ep, T, overflow, true);
    for (uint32_t e = 0; e < E; e++)
        total += c[e];
    if (total < target) round_robin(c, E, row->ep, T, target - total, true);
    if (total > target) round_robin(c, E, row->ep, T, total - target, false);
    busiest_to_rank0(c, E, row->ep);
    if (row->groups > 1 && row->topk_groups < row->groups) reroute_power_law(row, c);
}

int ffn_moe_fused_draw(const ffn_aic_moe *row, uint64_t seed, uint64_t *counts, size_t n)
{
    int rc = ffn_moe_fused_check(row);
    if (rc) return rc;
    if (!counts || n < row->experts) return FFN_EINVAL;
    if (row->draw == FFN_DRAW_BALANCED && row->groups > 1 && row->topk_groups < row->groups)
        draw_balanced_grouped(row->tokens, row->experts, row->topk, row->groups, row->topk_groups,
                              counts);
    else if (row->draw == FFN_DRAW_BALANCED)
        draw_balanced(row->tokens, row->experts, row->topk, counts);
    else
        draw_power_law(row, seed, counts);
    return 0;
}

/* ---- the kernels ------------------------------------------------------------------------ */

/* The shard's copies per expert, padded to the row tile. */
typedef struct shard {
    uint32_t experts;    /* local experts */
    uint32_t active;     /* those with copies */
    uint64_t copies;     /* copies routed to them */
    uint64_t max_rows;   /* the most on one */
    uint64_t tiles;      /* sum over the local experts of ceil(rows / block_m) */
    uint64_t zero_tiles; /* the same over the other shards' experts */
    unsigned block_m;
} shard;

/* counts: all E experts, the shard's m first (ffn_moe_fused_draw) */
static void shard_of(const uint64_t *counts, uint32_t E, uint32_t m, unsigned block_m, shard *s)
{
    memset(s, 0, sizeof *s);
    s->experts = m;
    for (uint32_t i = 0; i < m; i++) {
        if (!counts[i]) continue;
        s->active++;
        s->copies += counts[i];
        s->max_rows = counts[i] > s->max_rows ? counts[i] : s->max_rows;
    }
    s->block_m =
        block_m ? block_m : ffn_moe_fused_block_m(s->active ? (double)s->copies / s->active : 0);
    for (uint32_t i = 0; i < E; i++) {
        const uint64_t t = (counts[i] + s->block_m - 1) / s->block_m;
        if (i < m)
            s->tiles += t;
        else
            s->zero_tiles += t;
    }
}

/* What both grouped GEMMs of a call share. */
typedef struct gemm_ctx {
    const ffn_hw *hw;
    const shard *s;
    const ffn_moe_fused_params *p;
    ffn_dtype cdt, wdt;
    double a_in;      /* bytes per input activation (quantised where cdt is narrow) */
    double zero_rows; /* other shards' copies whose output rows the kernel zeroes */
    bool zero_ctas;   /* the kernel runs a block per other shards' row tile */
    unsigned block_n, block_k;
    int wlevel; /* on-chip level holding the weights (0 = memory) */
} gemm_ctx;

/* The latency floor of a grouped GEMM [rows, k] x [k, n]: ceil(blocks / units) waves of
 * tile_s + ceil(k / block_k) kstep_s for the shard's row tiles, and of zero_tile_s for the
 * other shards' (docs/model.md). */
static double tile_floor_s(const gemm_ctx *g, uint64_t n, uint64_t k)
{
    const double units = g->hw->compute_units ? (double)g->hw->compute_units : 1.0;
    const double nt = ceil((double)n / g->block_n), ks = ceil((double)k / g->block_k);
    const double real = ceil((double)g->s->tiles * nt / units);
    const double zero = g->zero_ctas ? ceil((double)g->s->zero_tiles * nt / units) : 0.0;
    return g->hw->eff.launch_s + real * (g->p->tile_s + ks * g->p->kstep_s) +
           zero * g->p->zero_tile_s;
}

/* A grouped GEMM over the active experts as the simulator's GEMM (ffn_op_gemm_counts): the
 * shard's row tiles are the instances of one [block_m, k] x [k, n] GEMM, so its FLOPs are the
 * padded rows' 2 rows n k and the wave model counts sum_e ceil(rows_e / block_m) ceil(n /
 * tile_n) tiles; bytes: the active experts' weights with their scales (w_expert) plus each
 * copy's input row and bf16 output row, and the zeroed rows. Its time: the spec's GEMM time
 * with the FLOPs divided by gemm_eff, at least the latency floor, times slow. */
static void grouped_gemm(ffn_op *op, const gemm_ctx *g, const char *name, uint64_t n, uint64_t k,
                         double w_expert, double slow)
{
    const shard *s = g->s;
    if (s->tiles == 0) { /* no copy here: the blocks exit or write zeros */
        ffn_op_elem_counts(op, name, FFN_OP_GEMM, 0, 0, 0);
        op->predicted_s = tile_floor_s(g, n, k) * slow;
        return;
    }
    ffn_op_gemm_counts(op, name, s->block_m, n, k, s->tiles, 0, 0, g->cdt, 0);
    op->wdtype = g->wdt;
    op->weight_bytes = (double)s->active * w_expert;
    op->bytes = op->weight_bytes + (double)s->copies * ((double)k * g->a_in + 2.0 * (double)n) +
                g->zero_rows * 2.0 * (double)n;
    op->weights_level = g->wlevel;
    op->weights_frac = g->wlevel ? 1.0 : 0.0;
    ffn_op slower = *op;
    slower.flops = op->flops / g->p->gemm_eff;
    ffn_op_recost(&slower, g->hw);
    ffn_op_recost(op, g->hw);
    const double floor_s = tile_floor_s(g, n, k);
    op->predicted_s = (slower.predicted_s > floor_s ? slower.predicted_s : floor_s) * slow;
}

/* ops[i] as one elementwise kernel; its time */
static double elem_s(const ffn_hw *hw, ffn_op *ops, ffn_moe_fused_kernel i, double elems,
                     double flops, double bytes)
{
    ffn_op_elem(&ops[i], hw, kernel_names[i], FFN_OP_ELEMWISE, elems, flops, bytes);
    return ops[i].predicted_s;
}

/* The small kernels: each one pass at the device's elementwise bandwidth plus its launch
 * (ffn_op_elem). T tokens, C = T k copies, R the rows the activation and its quantisation run
 * over, q bytes per quantised activation (0: not quantised). */
static void small_kernels(const ffn_hw *hw, const ffn_aic_moe *row, const shard *s, double R,
                          double q, bool nongated, double *ks, ffn_op *ops)
{
    const double T = (double)row->tokens, k = row->topk, E = row->experts, C = T * k;
    const double d = (double)row->hidden, f = (double)(row->inter / row->tp);
    /* topk_softmax: fp32 logits in, (weight, id, source index) out; 5 FLOPs a logit for the
     * scores and log2(k + 1) comparisons for the top-k (docs/model.md, section 7) */
    ks[FFN_MF_ROUTER] = elem_s(hw, ops, FFN_MF_ROUTER, T * E, T * E * (5.0 + log2(k + 1.0)),
                               T * E * 4.0 + C * 12.0);
    /* moe_align_block_size: ids in; the sorted-id buffer, padded for every local expert, and
     * one expert id per row tile out */
    const double padded_buf = C + (double)s->experts * (s->block_m - 1.0);
    ks[FFN_MF_ALIGN] =
        elem_s(hw, ops, FFN_MF_ALIGN, C, C, C * 4.0 + padded_buf * 4.0 + (double)s->tiles * 4.0);
    if (q > 0) { /* per-token-group quantisation: bf16 in, q bytes a value with scales out */
        ks[FFN_MF_QUANT_IN] = elem_s(hw, ops, FFN_MF_QUANT_IN, T * d, FFN_QACT_OPS_PER_ELEM * T * d,
                                     T * d * (2.0 + q));
        ks[FFN_MF_QUANT_MID] = elem_s(hw, ops, FFN_MF_QUANT_MID, R * f,
                                      FFN_QACT_OPS_PER_ELEM * R * f, R * f * (2.0 + q));
    }
    /* silu_and_mul: [R, 2f] bf16 in, [R, f] out, SiLU 4 FLOPs and the multiply 1; a non-gated
     * expert's activation (relu2: a max and a square) [R, f] in and out */
    if (nongated)
        ks[FFN_MF_ACT] = elem_s(hw, ops, FFN_MF_ACT, R * f, 2.0 * R * f, R * f * 4.0);
    else
        ks[FFN_MF_ACT] = elem_s(hw, ops, FFN_MF_ACT, R * f, 5.0 * R * f, R * f * 6.0);
    /* moe_sum: [T, k, d] in, [T, d] out */
    ks[FFN_MF_COMBINE] = elem_s(hw, ops, FFN_MF_COMBINE, C * d, C * d, C * d * 2.0 + T * d * 2.0);
}

static void resolve_opts(const ffn_moe_fused_opts *o, const ffn_aic_moe *row, ffn_moe_fused_opts *r)
{
    if (o)
        *r = *o;
    else
        ffn_moe_fused_opts_default(r);
    if (r->draws == 0) r->draws = FFN_MOE_FUSED_DRAWS;
    if (r->engine == FFN_ENGINE_NONE) r->engine = FFN_ENGINE_VLLM;
    if (!r->params) r->params = ffn_moe_fused_default_params(row->adtype);
    /* fp8-block's Triton blocks are its 128 x 128 scale blocks (get_default_config) */
    const bool sb = ffn_dtype_scale_block(row->wdtype) == 128;
    if (!r->block_n) r->block_n = sb ? 128 : FFN_MOE_FUSED_BLOCK_N;
    if (!r->block_k) r->block_k = sb ? 128 : FFN_MOE_FUSED_BLOCK_K;
}

static void fill_cost(ffn_moe_fused_cost *out, const shard *s, double ws)
{
    for (int i = 0; i < FFN_MF_COUNT; i++)
        out->time_s += out->kernel_s[i];
    out->gemm_flops = out->gate_up.flops + out->down.flops;
    out->gemm_bytes = out->gate_up.bytes + out->down.bytes;
    out->weight_bytes = ws;
    out->local_experts = s->experts;
    out->active_experts = s->active;
    out->local_copies = (double)s->copies;
    out->padded_rows = (double)s->tiles * s->block_m;
    out->max_expert_tokens = (double)s->max_rows;
    out->block_m = s->block_m;
}

int ffn_moe_fused_cost_counts(const ffn_hw *hw, const ffn_aic_moe *row, const uint64_t *counts,
                              size_t n, const ffn_moe_fused_opts *o, ffn_moe_fused_cost *out)
{
    int rc = ffn_moe_fused_check(row);
    if (rc) return rc;
    if (!hw || !counts || n < row->experts || !out) return FFN_EINVAL;
    ffn_moe_fused_opts op;
    resolve_opts(o, row, &op);
    const ffn_moe_fused_params *p = op.params;
    if (!(p->gemm_eff > 0)) return FFN_EINVAL;
    memset(out, 0, sizeof *out);
    shard s;
    shard_of(counts, row->experts, row->experts / row->ep, op.block_m, &s);

    const uint64_t d = row->hidden, f = row->inter / row->tp, C = row->tokens * row->topk;
    const uint64_t g_up = op.nongated ? 1 : 2; /* gate and up, or up alone */
    /* the simulator's compute dtype (sim/cost.c): fp8 and fp8-block activations multiply on
     * the fp8 units, bf16 and the weight-only int4 / mxfp4 (dequantised in the kernel, as
     * Marlin and the Triton w4a16 kernels do) in bf16 */
    const ffn_dtype cdt = ffn_compute_dtype(hw, row->wdtype, row->adtype);
    const double q =
        ffn_dtype_bits(ffn_dtype_unit(cdt)) < 16 ? ffn_dtype_bytes(row->adtype, 0) : 0.0;
    /* vLLM's and SGLang's Triton path runs the elementwise kernels over all C copies and its
     * GEMMs zero the other shards' rows (fused_moe_kernel, write_zeros_to_output);
     * TensorRT-LLM's permutation keeps the shard's copies only */
    const bool triton = p->path == FFN_MF_PATH_SORTED ||
                        (p->path == FFN_MF_PATH_ENGINE && op.engine != FFN_ENGINE_TRTLLM);
    const double w_gu = ffn_weight_matrix_bytes(row->wdtype, row->group, false, d, g_up * f);
    const double w_dn = ffn_weight_matrix_bytes(row->wdtype, row->group, false, f, d);
    const double ws = (double)s.active * (w_gu + w_dn);
    const gemm_ctx g = {
        .hw = hw,
        .s = &s,
        .p = p,
        .cdt = cdt,
        .wdt = row->wdtype,
        .a_in = q > 0 ? q : 2.0,
        .zero_rows = triton ? (double)(C - s.copies) : 0.0,
        .zero_ctas = triton,
        .block_n = op.block_n,
        .block_k = op.block_k,
        .wlevel = op.weights == FFN_WEIGHTS_COLD ? 0 : ffn_level_holding(hw, ws),
    };
    grouped_gemm(&out->gate_up, &g, "gate_up", g_up * f, d, w_gu, 1.0);
    /* Triton specialises integer arguments divisible by 16 and vectorises the loads along a
     * dimension whose stride it knows to be so; the down GEMM's weights [d, f/tp] and input
     * [rows, f/tp] have stride f/tp */
    grouped_gemm(&out->down, &g, "down", d, f, w_dn, triton && f % 16 ? p->misaligned_x : 1.0);
    small_kernels(hw, row, &s, triton ? (double)C : (double)s.copies, q, op.nongated, out->kernel_s,
                  out->ops);
    out->kernel_s[FFN_MF_GATE_UP] = out->gate_up.predicted_s;
    out->kernel_s[FFN_MF_DOWN] = out->down.predicted_s;
    out->kernel_s[FFN_MF_MODULE] = p->module_s + (row->ep > 1 ? p->ep_s : 0.0);
    out->ops[FFN_MF_GATE_UP] = out->gate_up;
    out->ops[FFN_MF_DOWN] = out->down;
    ffn_op_elem_counts(&out->ops[FFN_MF_MODULE], kernel_names[FFN_MF_MODULE], FFN_OP_ELEMWISE, 0, 0,
                       0);
    out->ops[FFN_MF_MODULE].predicted_s = out->kernel_s[FFN_MF_MODULE];
    fill_cost(out, &s, ws);
    return 0;
}

/* out += c / n, field by field (the means over draws) */
/* a += b / n over an op's work and times (its names and shape stay a's, b's on the first draw) */
static void accumulate_op(ffn_op *a, const ffn_op *b, double n, bool first)
{
    if (first) {
        *a = *b;
        a->flops = a->vec_ops = a->bytes = a->weight_bytes = 0;
        a->roofline_s = a->predicted_s = a->memory_s = 0;
        for (int i = 0; i <= FFN_HW_MAX_LEVELS; i++)
            a->served_bytes[i] = 0;
    }
    a->flops += b->flops / n;
    a->vec_ops += b->vec_ops / n;
    a->bytes += b->bytes / n;
    a->weight_bytes += b->weight_bytes / n;
    a->roofline_s += b->roofline_s / n;
    a->predicted_s += b->predicted_s / n;
    a->memory_s += b->memory_s / n;
    for (int i = 0; i <= FFN_HW_MAX_LEVELS; i++)
        a->served_bytes[i] += b->served_bytes[i] / n;
}

static void accumulate(ffn_moe_fused_cost *out, const ffn_moe_fused_cost *c, double n, bool first)
{
    out->time_s += c->time_s / n;
    for (int i = 0; i < FFN_MF_COUNT; i++)
        out->kernel_s[i] += c->kernel_s[i] / n;
    out->gemm_flops += c->gemm_flops / n;
    out->gemm_bytes += c->gemm_bytes / n;
    out->weight_bytes += c->weight_bytes / n;
    out->active_experts += c->active_experts / n;
    out->local_copies += c->local_copies / n;
    out->padded_rows += c->padded_rows / n;
    out->max_expert_tokens += c->max_expert_tokens / n;
    out->local_experts = c->local_experts;
    out->block_m = c->block_m;
    out->gate_up = c->gate_up;
    out->down = c->down;
    for (int i = 0; i < FFN_MF_COUNT; i++)
        if (c->ops[i].name[0]) accumulate_op(&out->ops[i], &c->ops[i], n, first);
}

int ffn_moe_fused_predict(const ffn_hw *hw, const ffn_aic_moe *row, const ffn_moe_fused_opts *o,
                          ffn_moe_fused_cost *out)
{
    int rc = ffn_moe_fused_check(row);
    if (rc) return rc;
    if (!hw || !out) return FFN_EINVAL;
    ffn_moe_fused_opts op;
    resolve_opts(o, row, &op);
    memset(out, 0, sizeof *out);
    const unsigned n = row->draw == FFN_DRAW_POWER_LAW ? op.draws : 1;
    uint64_t counts[MAX_E];
    for (unsigned i = 0; i < n; i++) {
        ffn_moe_fused_draw(row, op.seed + i, counts, MAX_E);
        ffn_moe_fused_cost c;
        rc = ffn_moe_fused_cost_counts(hw, row, counts, MAX_E, &op, &c);
        if (rc) return rc;
        accumulate(out, &c, (double)n, i == 0);
    }
    return 0;
}

double ffn_moe_fused_timed_s(const ffn_moe_fused_cost *c, ffn_aic_timed timed)
{
    if (timed != FFN_AIC_TIMED_GEMMS) return c->time_s;
    return c->kernel_s[FFN_MF_GATE_UP] + c->kernel_s[FFN_MF_ACT] + c->kernel_s[FFN_MF_QUANT_MID] +
           c->kernel_s[FFN_MF_DOWN];
}

int ffn_moe_fused_predict_many(const ffn_hw *hw, const ffn_aic_moe *rows, size_t n,
                               const ffn_moe_fused_opts *o, double *time_s, size_t *first_bad)
{
    if (n && (!hw || !rows || !time_s)) return FFN_EINVAL;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        ffn_moe_fused_cost c;
        if (ffn_moe_fused_predict(hw, &rows[i], o, &c) == 0) {
            time_s[i] = c.time_s;
            continue;
        }
        time_s[i] = NAN;
        if (!rc && first_bad) *first_bad = i;
        rc = FFN_EINVAL;
    }
    return rc;
}
