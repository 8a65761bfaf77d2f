/* Attention kernels and collectives fitted to measured tables (sim/attn_fit.c, sim/attention.c,
 * sim/collective.c, io/load/aic_load.c): the tables' attention and communication rows load, the
 * fits recover known parameters from rows made with them, the shipped H100 fit holds its stated
 * range on real rows, the collectives rise with the message and pick the custom all-reduce only
 * where the engine would, a spec without the blocks keeps the coarse roofline and the ring, and
 * the blocks survive the spec writer. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffnroof/aic.h"
#include "ffnroof/attention.h"
#include "ffnroof/attn_fit.h"
#include "ffnroof/hw_load.h"
#include "ffnroof/hw_write.h"
#include "ffnroof/sim.h"
#include "ffnroof/sort.h"

#define HW FFNROOF_SOURCE_DIR "/hw/"
#define CALIB FFNROOF_SOURCE_DIR "/data/calib/"

static char path[256];

static void setup(void)
{
    snprintf(path, sizeof path, "/tmp/ffnroof-test-attn-%d.tsv", (int)getpid());
}

static void teardown(void)
{
    unlink(path);
}

TestSuite(attn_fit, .init = setup, .fini = teardown);

static int load_text(const char *s, ffn_aic_table *t, ffn_diag *d)
{
    FILE *fp = fopen(path, "w");
    cr_assert_not_null(fp);
    fputs(s, fp);
    fclose(fp);
    ffn_diag_clear(d);
    return ffn_aic_load(path, t, d);
}

static void load_hw(const char *name, ffn_hw *hw)
{
    ffn_diag d;
    char p[512];
    snprintf(p, sizeof p, HW "%s.yaml", name);
    cr_assert_eq(ffn_hw_load(p, hw, &d), 0, "%s", d.msg);
}

Test(attn_fit, decode_rows_load_with_their_constants_and_window)
{
    ffn_aic_table t;
    ffn_diag d;
    cr_assert_eq(load_text("# op_name: generation_attention\n# head_dim: 128\n"
                           "kernel_source\tbatch_size\tnum_heads\tnum_key_value_heads\t"
                           "kv_cache_dtype\tstep\twindow_size\tlatency\n"
                           "fa3\t32\t64\t8\tfp8\t1023\t0\t0.05\n"
                           "fa3\t2\t8\t1\tbfloat16\t7\t128\t0.011\n",
                           &t, &d),
                 0, "%s", d.msg);
    cr_expect_eq(t.op, FFN_AIC_DECODE_ATTN);
    cr_assert_eq(t.n_attn, 2);
    cr_expect_eq(t.attn[0].batch, 32);
    cr_expect_eq(t.attn[0].len, 1023);
    cr_expect_eq(t.attn[0].heads, 64);
    cr_expect_eq(t.attn[0].kv_heads, 8);
    cr_expect_eq(t.attn[0].head_dim, 128);
    cr_expect_eq(t.attn[0].kv_dtype, FFN_DT_FP8);
    cr_expect_eq(t.attn[0].window, 0);
    cr_expect(fabs(t.attn[0].time_s - 50e-6) < 1e-15);
    cr_expect_eq(t.attn[1].window, 128);
    cr_expect_eq(t.attn[1].kv_dtype, FFN_DT_BF16);
    ffn_aic_free(&t);
}

Test(attn_fit, nccl_and_custom_rows_load_as_bytes_per_collective)
{
    ffn_aic_table t;
    ffn_diag d;
    cr_assert_eq(load_text("# kernel_source: NCCL\nop_name\tnccl_dtype\tnum_gpus\tmessage_size\t"
                           "latency\nall_gather\thalf\t2\t256\t0.005\nalltoall\tint8\t8\t1024\t"
                           "0.008\n",
                           &t, &d),
                 0, "%s", d.msg);
    cr_expect_eq(t.op, FFN_AIC_NCCL);
    cr_assert_eq(t.n_comm, 2);
    cr_expect_eq(t.comm[0].op, FFN_COLL_ALL_GATHER);
    cr_expect_eq(t.comm[0].bytes, 512.0);
    cr_expect_eq(t.comm[1].op, FFN_COLL_ALLTOALL);
    cr_expect_eq(t.comm[1].bytes, 1024.0);
    cr_expect_eq(t.comm[1].gpus, 8);
    ffn_aic_free(&t);
    cr_assert_eq(load_text("# op_name: all_reduce\n# allreduce_dtype: bfloat16\n"
                           "kernel_source\tnum_gpus\tmessage_size\tlatency\tbackend\n"
                           "vLLM_custom_graph\t4\t128\t0.0043\tvllm_graph\n"
                           "vLLM_custom_eager\t4\t128\t0.0206\tvllm_eager\n",
                           &t, &d),
                 0, "%s", d.msg);
    cr_expect_eq(t.op, FFN_AIC_CUSTOM_AR);
    cr_assert_eq(t.n_comm, 2);
    cr_expect_eq(t.comm[0].op, FFN_COLL_CUSTOM_ALL_REDUCE);
    cr_expect_eq(t.comm[0].bytes, 256.0);
    cr_expect_not(t.comm[0].eager);
    cr_expect(t.comm[1].eager);
    ffn_aic_free(&t);
}

Test(attn_fit, the_shipped_tables_load_every_row)
{
    static const char *const files[] = {
        "aic-h100_sxm_attention_vllm_0.24.0_generation_attention.tsv.gz",
        "aic-a100_sxm_attention_sglang_0.5.10_context_attention.tsv.gz",
        "aic-b200_sxm_comm_nccl_2.29.2_nccl.tsv.gz",
        "aic-h200_sxm_comm_vllm_0.24.0_custom_allreduce.tsv.gz",
        "vllm-mi300x_custom_allreduce.tsv.gz",
        "vllm-mi355x_custom_allreduce.tsv.gz"};
    static const size_t rows[] = {62166, 5627, 504, 138, 19, 7};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ffn_aic_table t;
        ffn_diag d;
        char p[512];
        snprintf(p, sizeof p, CALIB "%s", files[i]);
        cr_assert_eq(ffn_aic_load(p, &t, &d), 0, "%s", d.msg);
        cr_expect_eq(ffn_aic_rows(&t), rows[i], "%s: %zu rows", files[i], ffn_aic_rows(&t));
        ffn_aic_free(&t);
    }
}

/* Rows made by a known decode kernel on an H100 spec stripped of its fit. */
Test(attn_fit, the_decode_fit_recovers_known_parameters)
{
    static ffn_hw hw;
    load_hw("h100-sxm", &hw);
    memset(&hw.attn, 0, sizeof hw.attn);
    const ffn_attn_eff truth = {.fitted = true,
                                .launch_s = 9e-6,
                                .seq_s = 20e-9,
                                .unit_s = 15e-9,
                                .memory_max = 0.8,
                                .compute_max = 0.6};
    hw.attn.decode[FFN_ATTN_KV16] = truth;
    hw.attn.prefill[FFN_ATTN_KV16] = truth; /* the compute fraction decode holds */
    static ffn_attn_point pts[400];
    size_t n = 0;
    const uint32_t batches[] = {1, 4, 16, 64, 256};
    const uint64_t lens[] = {15, 255, 2047, 16383};
    const uint32_t kvh[] = {1, 8};
    for (int b = 0; b < 5; b++)
        for (int l = 0; l < 4; l++)
            for (int k = 0; k < 2; k++) {
                ffn_attn_point p = {.batch = batches[b],
                                    .len = lens[l],
                                    .heads = 32,
                                    .kv_heads = kvh[k],
                                    .head_dim = 128,
                                    .kv_dtype = FFN_DT_BF16};
                p.time_s = ffn_attn_point_predict(&hw, &p, true);
                pts[n++] = p;
            }
    ffn_attn_eff e;
    cr_assert_eq(ffn_attn_fit(&hw, pts, n, true, FFN_ATTN_KV16, &e), 0);
    cr_expect(fabs(e.launch_s / truth.launch_s - 1) < 0.03, "launch %g", e.launch_s);
    cr_expect(fabs(e.memory_max / truth.memory_max - 1) < 0.03, "memory_max %g", e.memory_max);
    cr_expect(fabs(e.unit_s / truth.unit_s - 1) < 0.15, "per kv head %g", e.unit_s);
    cr_expect_eq(e.compute_max, truth.compute_max, "held");
    cr_expect(e.median_abs < 0.01, "median error %g", e.median_abs);
    cr_expect_eq(e.points, n);
}

Test(attn_fit, the_prefill_fit_recovers_known_parameters)
{
    static ffn_hw hw;
    load_hw("h100-sxm", &hw);
    memset(&hw.attn, 0, sizeof hw.attn);
    const ffn_attn_eff truth = {.fitted = true,
                                .launch_s = 12e-6,
                                .seq_s = 20e-9,
                                .unit_s = 1e-9,
                                .memory_max = 0.4,
                                .compute_max = 0.65};
    hw.attn.prefill[FFN_ATTN_KV8] = truth;
    static ffn_attn_point pts[400];
    size_t n = 0;
    const uint32_t batches[] = {1, 4, 16, 64};
    const uint64_t lens[] = {16, 256, 1024, 4096, 16384};
    const uint32_t heads[] = {8, 64};
    for (int b = 0; b < 4; b++)
        for (int l = 0; l < 5; l++)
            for (int h = 0; h < 2; h++) {
                ffn_attn_point p = {.batch = batches[b],
                                    .len = lens[l],
                                    .heads = heads[h],
                                    .kv_heads = 8,
                                    .head_dim = 128,
                                    .kv_dtype = FFN_DT_FP8};
                p.time_s = ffn_attn_point_predict(&hw, &p, false);
                pts[n++] = p;
            }
    ffn_attn_eff e;
    cr_assert_eq(ffn_attn_fit(&hw, pts, n, false, FFN_ATTN_KV8, &e), 0);
    cr_expect(fabs(e.compute_max / truth.compute_max - 1) < 0.03, "compute_max %g", e.compute_max);
    cr_expect(fabs(e.launch_s / truth.launch_s - 1) < 0.05, "launch %g", e.launch_s);
    cr_expect(e.median_abs < 0.01, "median error %g", e.median_abs);
    cr_expect_eq(ffn_attn_fit(&hw, pts, n, false, FFN_ATTN_KV16, &e), FFN_EINVAL, "no 16-bit rows");
}

Test(attn_fit, the_collective_fit_recovers_latency_and_bus_bandwidth)
{
    ffn_coll_point pts[24];
    size_t n = 0;
    for (int i = 0; i < 22; i++) {
        const double bytes = 512.0 * pow(2.0, i);
        pts[n++] = (ffn_coll_point){.op = FFN_COLL_ALL_GATHER,
                                    .gpus = 4,
                                    .bytes = bytes,
                                    .time_s = 8e-6 + 0.75 * bytes / 250e9};
    }
    pts[n++] = (ffn_coll_point){.op = FFN_COLL_ALL_GATHER,
                                .gpus = 4,
                                .bytes = 1e6,
                                .eager = true,
                                .time_s = 1.0}; /* eager: left out */
    ffn_coll_fit f;
    cr_assert_eq(ffn_coll_fit_op(pts, n, FFN_COLL_ALL_GATHER, 4, &f), 0);
    cr_expect(fabs(f.latency_s / 8e-6 - 1) < 0.01, "latency %g", f.latency_s);
    cr_expect(fabs(f.bus_bps / 250e9 - 1) < 0.01, "bus %g", f.bus_bps);
    cr_expect_eq(f.points, 22);
    cr_expect_eq(f.lo_bytes, 512.0);
    cr_expect_eq(ffn_coll_fit_op(pts, n, FFN_COLL_ALL_GATHER, 8, &f), FFN_EINVAL);
}

/* The shipped H100 decode fit on real rows of the kind a serving step runs (FlashAttention 3, a
 * 16-bit cache, head_dim 128, 8 to 256 sequences of 1k to 16k tokens, no window): at least 80%
 * of them within the spec's p10-p90 of measured/predicted, and their median inside it. */
Test(attn_fit, the_h100_decode_fit_holds_its_range_on_real_rows)
{
    static ffn_hw hw;
    load_hw("h100-sxm", &hw);
    cr_assert(hw.attn.decode[FFN_ATTN_KV16].fitted, "hw/h100-sxm.yaml has no attention block");
    ffn_aic_table t;
    ffn_diag d;
    cr_assert_eq(ffn_aic_load(CALIB "aic-h100_sxm_attention_vllm_0.24.0_generation_attention"
                                    ".tsv.gz",
                              &t, &d),
                 0, "%s", d.msg);
    double p10, p90;
    cr_assert(ffn_attn_range(&hw, true, FFN_DT_BF16, &p10, &p90));
    static double r[4096];
    size_t n = 0, in = 0;
    for (size_t i = 0; i < t.n_attn && n < 4096; i++) {
        const ffn_attn_point *p = &t.attn[i];
        if (strcmp(t.kernels[p->kernel], "vllm_flash_attn_fa3") || p->window ||
            p->kv_dtype != FFN_DT_BF16 || p->head_dim != 128 || p->batch < 8 || p->batch > 256 ||
            p->len < 1023 || p->len > 16383)
            continue;
        r[n] = p->time_s / ffn_attn_point_predict(&hw, p, true);
        in += r[n] >= p10 && r[n] <= p90;
        n++;
    }
    ffn_aic_free(&t);
    cr_assert(n > 100, "%zu rows", n);
    cr_expect((double)in >= 0.8 * (double)n, "%zu of %zu rows within [%.3f, %.3f]", in, n, p10,
              p90);
    ffn_sort_doubles(r, n);
    const double med = r[n / 2];
    cr_expect(med >= p10 && med <= p90, "median measured/predicted %.3f", med);
}

Test(attn_fit, collectives_rise_with_the_message)
{
    static ffn_hw hw;
    load_hw("h100-sxm", &hw);
    for (int op = 0; op < FFN_COLL_COUNT; op++)
        for (uint64_t n = 2; n <= 16; n *= 2) {
            double last = 0;
            for (double b = 256; b <= 4e9; b *= 2) {
                const double t = ffn_coll_time_s(&hw.scaleup, (ffn_coll_op)op, b, n, NULL);
                cr_expect(t >= last, "%s n=%llu: %g s at %g B after %g s",
                          ffn_coll_name((ffn_coll_op)op), (unsigned long long)n, t, b, last);
                last = t;
            }
        }
}

Test(attn_fit, the_all_reduce_takes_the_custom_kernel_for_small_messages_only)
{
    static ffn_hw hw;
    load_hw("h100-sxm", &hw);
    const ffn_coll_model *m = &hw.scaleup.coll;
    cr_assert(m->n[FFN_COLL_ALL_REDUCE] > 0 && m->n[FFN_COLL_CUSTOM_ALL_REDUCE] > 0);
    cr_assert(m->custom_max_bytes > 0);
    /* a decode step's all-reduce: 64 tokens x 8192 x 2 B = 1 MiB on 8 GPUs */
    bool fitted;
    const double t = ffn_coll_time_s(&hw.scaleup, FFN_COLL_ALL_REDUCE, 1 << 20, 8, &fitted);
    const double custom =
        ffn_coll_time_s(&hw.scaleup, FFN_COLL_CUSTOM_ALL_REDUCE, 1 << 20, 8, NULL);
    cr_expect(fitted);
    cr_expect_eq(t, custom, "the custom kernel at 1 MiB: %g vs %g", t, custom);
    /* above the engine's buffer: NCCL's, whatever the custom fit says */
    ffn_link nccl = hw.scaleup;
    nccl.coll.n[FFN_COLL_CUSTOM_ALL_REDUCE] = 0;
    const double big = 4.0 * m->custom_max_bytes;
    cr_expect_eq(ffn_coll_time_s(&hw.scaleup, FFN_COLL_ALL_REDUCE, big, 8, NULL),
                 ffn_coll_time_s(&nccl, FFN_COLL_ALL_REDUCE, big, 8, NULL));
    /* beyond the fitted group sizes: the ring over the link */
    ffn_link ring = hw.scaleup;
    memset(&ring.coll, 0, sizeof ring.coll);
    cr_expect_eq(ffn_coll_time_s(&hw.scaleup, FFN_COLL_ALL_REDUCE, 1 << 20, 16, &fitted),
                 ffn_coll_time_s(&ring, FFN_COLL_ALL_REDUCE, 1 << 20, 16, NULL));
    cr_expect_not(fitted);
    /* 6 GPUs: between the fitted 4 and 8 */
    const double t4 = ffn_coll_time_s(&hw.scaleup, FFN_COLL_ALL_GATHER, 1 << 24, 4, NULL);
    const double t6 = ffn_coll_time_s(&hw.scaleup, FFN_COLL_ALL_GATHER, 1 << 24, 6, &fitted);
    const double t8 = ffn_coll_time_s(&hw.scaleup, FFN_COLL_ALL_GATHER, 1 << 24, 8, NULL);
    cr_expect(fitted);
    cr_expect(t6 >= fmin(t4, t8) * 0.9 && t6 <= fmax(t4, t8) * 1.1, "%g %g %g", t4, t6, t8);
    double p10, p90;
    cr_expect(ffn_coll_range(&hw, &hw.scaleup, FFN_COLL_ALL_REDUCE, 8, &p10, &p90));
    cr_expect(p10 < 1.0 && p90 > 1.0);
}

/* A spec without an attention: block (the MI300X's) costs attention by the coarse roofline, and
 * a group size its collectives: block does not fit (8 MI300X) the all-reduce by the ring,
 * exactly as before. */
Test(attn_fit, a_spec_without_the_blocks_keeps_the_coarse_model)
{
    static ffn_hw hw;
    load_hw("mi300x", &hw);
    cr_assert_not(hw.attn.decode[0].fitted || hw.attn.prefill[0].fitted);
    ffn_attn_dims d = {.heads = 8,
                       .kv_heads = 1,
                       .qk_dim = 128,
                       .v_dim = 128,
                       .kv_bytes = 2 * 128 * 2,
                       .act_bytes = 2,
                       .kv_dtype = FFN_DT_BF16,
                       .compute_dt = FFN_DT_BF16};
    ffn_attn_work w;
    const double t = ffn_attn_decode_s(&hw, &d, 64, 1.0, 64 * 4096.0, &w);
    cr_expect_eq(t, ffn_coarse_s(&hw, w.flops, w.bytes, FFN_DT_BF16, 1.0));
    const double tp = ffn_attn_prefill_s(&hw, &d, 4, 4 * 2048.0, 4 * 2048.0 * 2049 / 2, &w);
    cr_expect_eq(tp, ffn_coarse_s(&hw, w.flops, w.bytes, FFN_DT_BF16, 1.0));
    double p10, p90, u10, u90;
    cr_expect_not(ffn_attn_range(&hw, true, FFN_DT_BF16, &p10, &p90));
    ffn_hw_unc_range(&hw, &u10, &u90);
    cr_expect(p10 == u10 && p90 == u90);
    ffn_op op;
    ffn_op_allreduce(&op, &hw.scaleup, "ar", 1 << 20, 8);
    const double ring =
        2.0 * 7 / 8 * (1 << 20) / hw.scaleup.bandwidth_bps + 2.0 * 7 * hw.scaleup.latency_s;
    cr_expect(fabs(op.predicted_s / ring - 1) < 1e-12, "%g vs %g", op.predicted_s, ring);
    /* at 4 GPUs its all-reduce is vLLM's custom kernel as the public kernel table timed it:
     * 1 MiB in 22.91 us (vLLM pull request #19744, data/calib/vllm-mi300x_custom_allreduce) */
    bool fitted = false;
    const double t4 = ffn_coll_time_s(&hw.scaleup, FFN_COLL_ALL_REDUCE, 1 << 20, 4, &fitted);
    cr_expect(fitted);
    cr_expect(fabs(t4 / 22.91e-6 - 1) < 0.15, "%g s", t4);
    ffn_coll_time_s(&hw.scaleup, FFN_COLL_ALL_REDUCE, 1 << 20, 8, &fitted);
    cr_expect_not(fitted, "8 MI300X have no public timing of the kernel");
}

Test(attn_fit, the_blocks_survive_the_spec_writer)
{
    static ffn_hw hw, back;
    load_hw("h100-sxm", &hw);
    char out[256];
    snprintf(out, sizeof out, "/tmp/ffnroof-test-attn-%d.yaml", (int)getpid());
    ffn_diag d;
    cr_assert_eq(ffn_hw_write(&hw, out, &d), 0, "%s", d.msg);
    cr_assert_eq(ffn_hw_load(out, &back, &d), 0, "%s", d.msg);
    unlink(out);
    for (int k = 0; k < FFN_ATTN_KV_COUNT; k++) {
        cr_expect_eq(back.attn.decode[k].fitted, hw.attn.decode[k].fitted);
        cr_expect(fabs(back.attn.decode[k].launch_s - hw.attn.decode[k].launch_s) <= 1e-15);
        cr_expect(fabs(back.attn.prefill[k].compute_max - hw.attn.prefill[k].compute_max) <= 1e-12);
    }
    for (int op = 0; op < FFN_COLL_COUNT; op++) {
        cr_expect_eq(back.scaleup.coll.n[op], hw.scaleup.coll.n[op]);
        for (int i = 0; i < hw.scaleup.coll.n[op]; i++)
            cr_expect(
                fabs(back.scaleup.coll.fit[op][i].bus_bps / hw.scaleup.coll.fit[op][i].bus_bps -
                     1) < 1e-9);
    }
    cr_expect_eq(back.scaleup.coll.custom_max_bytes, hw.scaleup.coll.custom_max_bytes);
    cr_expect_str_eq(back.attn.source, hw.attn.source);
}
