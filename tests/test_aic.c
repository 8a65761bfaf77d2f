/* The op-table reader (io/load/aic_load.c, include/ffnroof/aic.h): the three header layouts of
 * aiconfigurator's tables (kernel_source and gemm_dtype as columns or as `# name:` lines), MoE
 * tables, gzip and plain alike, every dtype and distribution name, milliseconds to seconds, each
 * bad input refused at its file:line:col, a 200k-row table, and `ffnroof fit` on such tables
 * through its heap loader (io/load/fit_kit.c) and on the command line. The fixtures in
 * tests/data/aic/ are hand-made samples in the tables' layout. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ffnroof/aic.h"
#include "ffnroof/fitdata.h"
#include "helpers/cli_harness.h"

#define DATA FFNROOF_TEST_DATA "/aic/"

static char path[256];

static void setup(void)
{
    snprintf(path, sizeof path, "/tmp/ffnroof-test-aic-%d.tsv", (int)getpid());
}

static void teardown(void)
{
    unlink(path);
}

TestSuite(aic, .init = setup, .fini = teardown);

static void write_file(const char *p, const void *data, size_t n)
{
    FILE *fp = fopen(p, "wb");
    cr_assert_not_null(fp);
    cr_assert_eq(fwrite(data, 1, n, fp), n);
    cr_assert_eq(fclose(fp), 0);
}

static int load(const char *p, ffn_aic_table *t, ffn_diag *d)
{
    ffn_diag_clear(d);
    return ffn_aic_load(p, t, d);
}

static int load_text(const char *s, ffn_aic_table *t, ffn_diag *d)
{
    write_file(path, s, strlen(s));
    return load(path, t, d);
}

static int run(const char *args, char *out, size_t cap);

Test(aic, kernel_and_dtype_columns_load_every_row_with_its_kernel)
{
    ffn_aic_table t;
    ffn_diag d;
    cr_assert_eq(load(DATA "gemm-columns.tsv", &t, &d), 0, "%s", d.msg);
    cr_expect_eq(t.op, FFN_AIC_GEMM);
    cr_expect_eq(t.engine, FFN_ENGINE_VLLM);
    cr_expect_str_eq(t.version, "0.24.0");
    cr_expect_str_eq(t.device, "NVIDIA H100 80GB HBM3");
    cr_expect(strstr(t.source, "aiconfigurator") != NULL, "%s", t.source);
    cr_assert_eq(t.n_pts, 8);
    cr_expect_eq(t.n_kernels, 7, "repeated kernels are one entry, got %zu", t.n_kernels);
    cr_expect_str_eq(t.kernels[t.pt_kernel[0]], "torch.nn.functional.linear");
    cr_expect_str_eq(t.kernels[t.pt_kernel[3]], "FlashInferCuteDslNvFp4LinearKernel");
    cr_expect_eq(t.pt_kernel[4], t.pt_kernel[0]);
    cr_expect_eq(t.pts[3].m, 32768);
    cr_expect_eq(t.pts[3].n, 65536);
    cr_expect_eq(t.pts[3].k, 16384);
    cr_expect_eq(t.pts[3].f, 0);
    cr_expect(t.pts[3].no_harness);
    cr_expect_float_eq(t.pts[3].time_s, 19.890548706054688e-3, 1e-15);
    ffn_aic_free(&t);
    cr_expect_null(t.pts);
}

Test(aic, every_dtype_name_maps_to_its_weight_and_activation_formats)
{
    static const struct {
        ffn_dtype w, a;
        unsigned group;
    } want[8] = {
        {FFN_DT_BF16, FFN_DT_BF16, 0},           {FFN_DT_FP8, FFN_DT_FP8, 0},
        {FFN_DT_FP8_BLOCK, FFN_DT_FP8_BLOCK, 0}, {FFN_DT_NVFP4, FFN_DT_NVFP4, 0},
        {FFN_DT_FP16, FFN_DT_FP16, 0},           {FFN_DT_INT4, FFN_DT_BF16, 128},
        {FFN_DT_MXFP4, FFN_DT_MXFP4, 0},         {FFN_DT_MXFP4, FFN_DT_BF16, 0},
    };
    ffn_aic_table t;
    ffn_diag d;
    cr_assert_eq(load(DATA "gemm-columns.tsv", &t, &d), 0, "%s", d.msg);
    for (size_t i = 0; i < 8; i++) {
        cr_expect_eq(t.pts[i].wdtype, want[i].w, "row %zu: weights %s", i,
                     ffn_dtype_name(t.pts[i].wdtype));
        cr_expect_eq(t.pts[i].adtype, want[i].a, "row %zu: activations %s", i,
                     ffn_dtype_name(t.pts[i].adtype));
        cr_expect_eq(t.pts[i].group, want[i].group, "row %zu", i);
    }
    ffn_aic_free(&t);
}

Test(aic, kernel_and_dtype_lines_apply_to_every_row)
{
    ffn_aic_table t;
    ffn_diag d;
    cr_assert_eq(load(DATA "gemm-lines.tsv", &t, &d), 0, "%s", d.msg);
    cr_expect_eq(t.engine, FFN_ENGINE_SGLANG);
    cr_assert_eq(t.n_pts, 4);
    cr_assert_eq(t.n_kernels, 1);
    cr_expect_str_eq(t.kernels[0], "sglang");
    for (size_t i = 0; i < t.n_pts; i++) {
        cr_expect_eq(t.pts[i].wdtype, FFN_DT_BF16);
        cr_expect_eq(t.pt_kernel[i], 0);
    }
    cr_expect_eq(t.pts[1].m, 96);
    cr_expect_float_eq(t.pts[1].time_s, 0.01200355589389801e-3, 1e-18);
    ffn_aic_free(&t);
}

Test(aic, a_kernel_line_and_a_dtype_column_mix)
{
    ffn_aic_table t;
    ffn_diag d;
    cr_assert_eq(load(DATA "gemm-mixed.tsv", &t, &d), 0, "%s", d.msg);
    cr_expect_eq(t.engine, FFN_ENGINE_TRTLLM);
    cr_assert_eq(t.n_pts, 3);
    cr_expect_str_eq(t.kernels[0], "torch_flow");
    cr_expect_eq(t.pts[0].wdtype, FFN_DT_BF16);
    cr_expect_eq(t.pts[1].wdtype, FFN_DT_FP8);
    cr_expect_eq(t.pts[2].wdtype, FFN_DT_FP8_BLOCK);
    ffn_aic_free(&t);
}

Test(aic, moe_rows_load_with_their_draws)
{
    ffn_aic_table t;
    ffn_diag d;
    cr_assert_eq(load(DATA "moe-columns.tsv", &t, &d), 0, "%s", d.msg);
    cr_expect_eq(t.op, FFN_AIC_MOE);
    cr_expect_eq(t.n_pts, 0);
    cr_assert_eq(t.n_moe, 5);
    const ffn_aic_moe *m = t.moe;
    cr_expect_eq(m[0].tokens, 1);
    cr_expect_eq(m[0].hidden, 4096);
    cr_expect_eq(m[0].inter, 2048);
    cr_expect_eq(m[0].topk, 6);
    cr_expect_eq(m[0].experts, 256);
    cr_expect_eq(m[0].draw, FFN_DRAW_BALANCED);
    cr_expect_eq(m[0].alpha, 0.0);
    cr_expect_eq(m[0].wdtype, FFN_DT_FP8_BLOCK);
    cr_expect_float_eq(m[0].time_s, 0.08247999846935272e-3, 1e-18);
    cr_expect_eq(m[1].draw, FFN_DRAW_POWER_LAW);
    cr_expect_float_eq(m[1].alpha, 1.01, 1e-12);
    cr_expect_float_eq(m[2].alpha, 1.2, 1e-12);
    cr_expect_eq(m[2].tp, 2);
    cr_expect_eq(m[2].ep, 4);
    cr_expect_eq(m[2].wdtype, FFN_DT_BF16);
    cr_expect_eq(m[3].wdtype, FFN_DT_INT4);
    cr_expect_eq(m[3].adtype, FFN_DT_BF16);
    cr_expect_eq(m[3].group, 128);
    cr_expect_eq(m[4].wdtype, FFN_DT_MXFP4);
    cr_expect_eq(m[4].adtype, FFN_DT_BF16);
    cr_expect_str_eq(t.kernels[m[4].kernel],
                     "vllm_compressedtensorsw4a4mxfp4moe_marlin_marlinexperts_situ_as_silu");
    cr_expect_eq(m[1].kernel, m[0].kernel);
    ffn_aic_free(&t);
}

/* The rows of a model routing group-limited (DeepSeek-V3's shape: hidden 7168, experts of 2048,
 * top-8 of 256) are marked with its groups in the tables of engines whose collector builds the
 * model's router (vLLM, SGLang), and not in TensorRT-LLM's, whose rows are routed plainly. */
Test(aic, group_limited_rows_are_marked_for_the_engines_that_route_them)
{
    ffn_aic_table t;
    ffn_diag d;
    cr_assert_eq(load(DATA "moe-columns.tsv", &t, &d), 0, "%s", d.msg);
    size_t marked = 99;
    cr_assert_eq(ffn_aic_route_groups(&t, FFNROOF_SOURCE_DIR "/models", &marked, &d), 0, "%s",
                 d.msg);
    cr_expect_eq(marked, 1u);
    for (size_t i = 0; i < t.n_moe; i++) {
        cr_expect_eq(t.moe[i].groups, i == 3 ? 8u : 0u, "row %zu", i);
        cr_expect_eq(t.moe[i].topk_groups, i == 3 ? 4u : 0u, "row %zu", i);
    }
    ffn_aic_free(&t);
    const char *text = "# framework: TRTLLM\n# op_name: moe\n"
                       "kernel_source\tmoe_dtype\tnum_tokens\thidden_size\tinter_size\ttopk\t"
                       "num_experts\tmoe_tp_size\tmoe_ep_size\tdistribution\tlatency\n"
                       "moe_torch_flow_cutlass\tfp8_block\t64\t7168\t2048\t8\t256\t1\t1\t"
                       "balanced\t0.3\n";
    cr_assert_eq(load_text(text, &t, &d), 0, "%s", d.msg);
    cr_assert_eq(t.n_moe, 1u);
    cr_assert_eq(ffn_aic_route_groups(&t, FFNROOF_SOURCE_DIR "/models", &marked, &d), 0);
    cr_expect_eq(marked, 0u);
    cr_expect_eq(t.moe[0].groups, 0u);
    ffn_aic_free(&t);
}

/* The collector's other quantisation modes read as ffnroof's formats, and every such MoE row
 * is predicted. */
Test(aic, the_collectors_other_quant_modes_load_and_are_predicted)
{
    static const struct {
        const char *name;
        ffn_dtype w, a;
        unsigned group;
    } modes[] = {
        {"fp8_static", FFN_DT_FP8, FFN_DT_FP8, 0},
        {"fp8_ootb", FFN_DT_FP8, FFN_DT_FP8, 0},
        {"int8_wo", FFN_DT_INT8, FFN_DT_BF16, 0},
        {"sq", FFN_DT_INT8, FFN_DT_INT8, 0},
        {"w4afp8", FFN_DT_INT4, FFN_DT_FP8, 128},
        {"w4a8_mxfp4_mxfp8", FFN_DT_MXFP4, FFN_DT_FP8, 0},
    };
    char text[2048] = "# framework: TRTLLM\n# op_name: moe\nmoe_dtype\tnum_tokens\thidden_size\t"
                      "inter_size\ttopk\tnum_experts\tmoe_tp_size\tmoe_ep_size\tdistribution\t"
                      "latency\n";
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text),
                 "%s\t16\t2048\t768\t8\t128\t1\t1\tbalanced\t0.05\n", modes[i].name);
    write_file(path, text, strlen(text));
    ffn_aic_table t;
    ffn_diag d;
    cr_assert_eq(load(path, &t, &d), 0, "%s", d.msg);
    cr_assert_eq(t.n_moe, sizeof modes / sizeof *modes);
    for (size_t i = 0; i < t.n_moe; i++) {
        cr_expect_eq(t.moe[i].wdtype, modes[i].w, "%s", modes[i].name);
        cr_expect_eq(t.moe[i].adtype, modes[i].a, "%s", modes[i].name);
        cr_expect_eq(t.moe[i].group, modes[i].group, "%s", modes[i].name);
    }
    ffn_aic_free(&t);
    static char out[65536];
    char args[512];
    snprintf(args, sizeof args, "fit --hw b200 --data %s --check", path);
    cr_assert_eq(run(args, out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "not predicted") == NULL, "%s", out);
    cr_expect(strstr(out, "on 6 of 6 rows") != NULL, "%s", out);
}

Test(aic, gzip_and_plain_give_the_same_rows)
{
    static const char *const names[][2] = {{"gemm-columns.tsv", "gemm-columns.tsv.gz"},
                                           {"moe-columns.tsv", "moe-columns.tsv.gz"}};
    for (int f = 0; f < 2; f++) {
        char a[512], b[512];
        snprintf(a, sizeof a, DATA "%s", names[f][0]);
        snprintf(b, sizeof b, DATA "%s", names[f][1]);
        ffn_aic_table x, y;
        ffn_diag d;
        cr_assert_eq(load(a, &x, &d), 0, "%s", d.msg);
        cr_assert_eq(load(b, &y, &d), 0, "%s", d.msg);
        cr_expect(ffn_aic_is_table(a) && ffn_aic_is_table(b));
        cr_assert_eq(x.n_pts, y.n_pts);
        cr_assert_eq(x.n_moe, y.n_moe);
        if (x.n_pts) cr_expect_eq(memcmp(x.pts, y.pts, x.n_pts * sizeof *x.pts), 0);
        if (x.n_moe) cr_expect_eq(memcmp(x.moe, y.moe, x.n_moe * sizeof *x.moe), 0);
        cr_expect_eq(memcmp(x.kernels, y.kernels, sizeof x.kernels), 0);
        ffn_aic_free(&x);
        ffn_aic_free(&y);
    }
}

Test(aic, the_older_fit_formats_are_no_tables)
{
    cr_expect_not(ffn_aic_is_table(FFNROOF_TEST_DATA "/fit/gpu-kit-sample.csv"));
    cr_expect_not(ffn_aic_is_table(FFNROOF_TEST_DATA "/fit/a100-sxm-80gb-gemm-fp16.csv"));
    cr_expect_not(ffn_aic_is_table("/nonexistent/ffnroof"));
    cr_expect_not(ffn_aic_is_table("/tmp"));
}

#define GEMM_HEAD "# op_name: gemm\nkernel_source\tgemm_dtype\tm\tn\tk\tlatency\n"

Test(aic, crlf_trailing_tabs_blank_lines_and_a_repeated_header_load)
{
    const char *s = "# op_name: gemm\r\n"
                    "kernel_source\tgemm_dtype\tm\tn\tk\tlatency\t\r\n"
                    "\r\n"
                    "a\tbfloat16\t1\t2\t3\t0.5\t\t\r\n"
                    "   \n"
                    "kernel_source\tgemm_dtype\tm\tn\tk\tlatency\n"
                    "# a comment between rows\n"
                    "b\tfp8\t4\t5\t6\t1e-3"; /* no newline at the end */
    ffn_aic_table t;
    ffn_diag d;
    cr_assert_eq(load_text(s, &t, &d), 0, "%d:%d: %s", d.line, d.col, d.msg);
    cr_assert_eq(t.n_pts, 2);
    cr_expect_eq(t.pts[1].k, 6);
    cr_expect_float_eq(t.pts[1].time_s, 1e-6, 1e-18);
    cr_expect_str_eq(t.kernels[t.pt_kernel[1]], "b");
    ffn_aic_free(&t);
}

/* A bad input and where and how it is refused. */
typedef struct bad_case {
    const char *name, *text;
    int err, line, col;
    const char *msg;
} bad_case;

static const bad_case bad_cases[] = {
    {"unknown dtype in a column", GEMM_HEAD "a\tint3\t1\t1\t1\t1\n", FFN_ESCHEMA, 3, 3,
     "unknown dtype 'int3' (known: bfloat16, float16, fp8, fp8_block, nvfp4, mxfp4, int4_wo, "
     "w4a16_mxfp4, fp8_static, fp8_ootb, int8_wo, sq, w4afp8, w4a8_mxfp4_mxfp8)"},
    {"unknown dtype in a line",
     "# op_name: gemm\n# gemm_dtype: fp6\nm\tn\tk\tlatency\n1\t1\t1\t1\n", FFN_ESCHEMA, 2, 15,
     "unknown dtype 'fp6' (known: bfloat16, float16, fp8, fp8_block, nvfp4, mxfp4, int4_wo, "
     "w4a16_mxfp4, fp8_static, fp8_ootb, int8_wo, sq, w4afp8, w4a8_mxfp4_mxfp8)"},
    {"zero dimension", GEMM_HEAD "a\tfp8\t0\t1\t1\t1\n", FFN_ERANGE, 3, 7,
     "'m' must be in [1, 2^40], got '0'"},
    {"negative dimension", GEMM_HEAD "a\tfp8\t1\t-5\t1\t1\n", FFN_EPARSE, 3, 9,
     "'n' must be a whole number, got '-5'"},
    {"fractional dimension", GEMM_HEAD "a\tfp8\t1\t1\t1.5\t1\n", FFN_EPARSE, 3, 11,
     "'k' must be a whole number, got '1.5'"},
    {"dimension over 2^40", GEMM_HEAD "a\tfp8\t1099511627777\t1\t1\t1\n", FFN_ERANGE, 3, 7,
     "'m' must be in [1, 2^40], got '1099511627777'"},
    {"huge dimension", GEMM_HEAD "a\tfp8\t99999999999999999999999\t1\t1\t1\n", FFN_ERANGE, 3, 7,
     "'m' must be in [1, 2^40], got '99999999999999999999999'"},
    {"NaN latency", GEMM_HEAD "a\tfp8\t1\t1\t1\tnan\n", FFN_ERANGE, 3, 13,
     "'latency' must be a positive, finite number of milliseconds, got 'nan'"},
    {"infinite latency", GEMM_HEAD "a\tfp8\t1\t1\t1\tinf\n", FFN_ERANGE, 3, 13,
     "'latency' must be a positive, finite number of milliseconds, got 'inf'"},
    {"overflowing latency", GEMM_HEAD "a\tfp8\t1\t1\t1\t1e999\n", FFN_ERANGE, 3, 13,
     "'latency' must be a positive, finite number of milliseconds, got '1e999'"},
    {"negative latency", GEMM_HEAD "a\tfp8\t1\t1\t1\t-0.5\n", FFN_ERANGE, 3, 13,
     "'latency' must be a positive, finite number of milliseconds, got '-0.5'"},
    {"zero latency", GEMM_HEAD "a\tfp8\t1\t1\t1\t0\n", FFN_ERANGE, 3, 13,
     "'latency' must be a positive, finite number of milliseconds, got '0'"},
    {"text latency", GEMM_HEAD "a\tfp8\t1\t1\t1\t0.5ms\n", FFN_EPARSE, 3, 13,
     "'latency' must be a number of milliseconds, got '0.5ms'"},
    {"a missing value", GEMM_HEAD "a\tfp8\t1\t1\t1\n", FFN_ESCHEMA, 3, 1,
     "expected 6 columns as the header has, got 5"},
    {"an extra value", GEMM_HEAD "a\tfp8\t1\t1\t1\t1\t7\n", FFN_ESCHEMA, 3, 1,
     "expected 6 columns as the header has, got 7"},
    {"an empty value", GEMM_HEAD "a\tfp8\t1\t\t1\t1\n", FFN_ESCHEMA, 3, 9, "'n' is empty"},
    {"a missing column", "# op_name: gemm\n# gemm_dtype: fp8\nm\tn\tlatency\n1\t1\t1\n",
     FFN_ESCHEMA, 3, 1,
     "no column or '# k:' line 'k' (a gemm table needs latency, gemm_dtype, m, n, k)"},
    {"a column and a line", "# op_name: gemm\n# gemm_dtype: fp8\ngemm_dtype\tm\tn\tk\tlatency\n",
     FFN_ESCHEMA, 3, 1, "'gemm_dtype' is both a column and a '# gemm_dtype:' line (line 2)"},
    {"a duplicate column", "# op_name: gemm\nm\tn\tk\tm\tlatency\n", FFN_ESCHEMA, 2, 7,
     "column 'm' given twice"},
    {"no op line", "# gemm_dtype: fp8\nm\tn\tk\tlatency\n1\t1\t1\t1\n", FFN_ESCHEMA, 2, 1,
     "no '# op_name:' line above the header"},
    {"an op not read", "# op_name: mla_bmm\nbatch_size\tisl\tlatency\n1\t1\t1\n", FFN_EUNSUPPORTED,
     1, 12,
     "op 'mla_bmm' is not read (gemm, moe, context_attention, generation_attention, all_reduce and "
     "NCCL tables with an op_name column are)"},
    {"an NCCL table without message_size", "op_name\tnum_gpus\tlatency\nall_gather\t2\t1\n",
     FFN_ESCHEMA, 1, 1,
     "no column or '# message_size:' line 'message_size' (a nccl table needs latency, op_name, "
     "num_gpus, message_size, nccl_dtype)"},
    {"more KV heads than heads",
     "# op_name: generation_attention\n# head_dim: 128\n# kv_cache_dtype: fp8\n"
     "batch_size\tstep\tnum_heads\tnum_key_value_heads\tlatency\n1\t1\t4\t8\t1\n",
     FFN_ERANGE, 5, 1, "num_key_value_heads 8 is more than num_heads 4"},
    {"a negative window",
     "# op_name: context_attention\n# head_dim: 64\n# kv_cache_dtype: bfloat16\n"
     "batch_size\tisl\tnum_heads\tnum_key_value_heads\twindow_size\tlatency\n1\t1\t1\t1\t-1\t1\n",
     FFN_EPARSE, 5, 9, "'window_size' must be a whole number, got '-1'"},
    {"an unknown KV dtype",
     "# op_name: generation_attention\n# head_dim: 128\n"
     "batch_size\tstep\tnum_heads\tnum_key_value_heads\tkv_cache_"
     "dtype\tlatency\n1\t1\t4\t1\tfp6\t1\n",
     FFN_ESCHEMA, 4, 9,
     "unknown dtype 'fp6' (known: bfloat16, float16, fp8, fp8_block, nvfp4, mxfp4, int4_wo, "
     "w4a16_mxfp4, fp8_static, fp8_ootb, int8_wo, sq, w4afp8, w4a8_mxfp4_mxfp8)"},
    {"an unknown collective",
     "op_name\tnccl_dtype\tnum_gpus\tmessage_size\tlatency\nbroadcast\thalf\t2\t1\t1\n",
     FFN_ESCHEMA, 2, 1,
     "unknown collective 'broadcast' (known: all_reduce, all_gather, reduce_scatter, alltoall)"},
    {"an unknown element type",
     "op_name\tnccl_dtype\tnum_gpus\tmessage_size\tlatency\nall_reduce\tfp4\t2\t1\t1\n",
     FFN_ESCHEMA, 2, 12,
     "unknown element type 'fp4' (known: half, float16, bfloat16, float, float32, int8, uint8, "
     "fp8)"},
    {"no GPUs", "op_name\tnccl_dtype\tnum_gpus\tmessage_size\tlatency\nall_reduce\thalf\t0\t1\t1\n",
     FFN_ERANGE, 2, 17, "'num_gpus' must be in [1, 2^20], got '0'"},
    {"a backend neither graph nor eager",
     "# op_name: all_reduce\n# allreduce_dtype: bfloat16\n"
     "num_gpus\tmessage_size\tlatency\tbackend\n2\t128\t0.01\tvllm_fast\n",
     FFN_ESCHEMA, 4, 12, "'backend' must end in 'graph' or 'eager', got 'vllm_fast'"},
    {"an unknown framework", "# framework: onnx\n" GEMM_HEAD "a\tfp8\t1\t1\t1\t1\n", FFN_ESCHEMA, 1,
     14, "unknown framework 'onnx' (known: vLLM, SGLang, TRTLLM)"},
    {"a line given twice", "# op_name: gemm\n# op_name: moe\n", FFN_ESCHEMA, 2, 1,
     "'# op_name:' given twice"},
    {"a value changed below the header",
     "# op_name: gemm\n# gemm_dtype: fp8\nm\tn\tk\tlatency\n1\t1\t1\t1\n# gemm_dtype: bfloat16\n",
     FFN_ESCHEMA, 5, 15,
     "'# gemm_dtype: bfloat16' below the header changes the value above it ('fp8', line 2): one "
     "table a file"},
    {"an empty file", "", FFN_ESCHEMA, 0, 0, "the file is empty"},
    {"comments only", "# op_name: gemm\n# nothing else\n", FFN_ESCHEMA, 0, 0,
     "no header line (only comments)"},
    {"a header only", GEMM_HEAD, FFN_ESCHEMA, 0, 0, "no rows below the header"},
    {"unknown distribution",
     "# op_name: moe\n# moe_dtype: fp8\nnum_tokens\thidden_size\tinter_size\ttopk\tnum_experts\t"
     "moe_tp_size\tmoe_ep_size\tdistribution\tlatency\n1\t64\t64\t2\t8\t1\t1\tzipf\t1\n",
     FFN_ESCHEMA, 4, 17,
     "unknown distribution 'zipf' (known: balanced, power_law_<alpha> with alpha > 0)"},
    {"power law without alpha",
     "# op_name: moe\n# moe_dtype: fp8\n# distribution: power_law_\nnum_tokens\thidden_size\t"
     "inter_size\ttopk\tnum_experts\tmoe_tp_size\tmoe_ep_size\tlatency\n1\t64\t64\t2\t8\t1\t1\t1\n",
     FFN_ESCHEMA, 3, 17,
     "unknown distribution 'power_law_' (known: balanced, power_law_<alpha> with alpha > 0)"},
    {"power law with a negative alpha",
     "# op_name: moe\n# moe_dtype: fp8\n# distribution: power_law_-1\nnum_tokens\thidden_size\t"
     "inter_size\ttopk\tnum_experts\tmoe_tp_size\tmoe_ep_size\tlatency\n1\t64\t64\t2\t8\t1\t1\t1\n",
     FFN_ESCHEMA, 3, 17,
     "unknown distribution 'power_law_-1' (known: balanced, power_law_<alpha> with alpha > 0)"},
    {"topk above the experts",
     "# op_name: moe\n# moe_dtype: fp8\n# distribution: balanced\nnum_tokens\thidden_size\t"
     "inter_size\ttopk\tnum_experts\tmoe_tp_size\tmoe_ep_size\tlatency\n1\t64\t64\t9\t8\t1\t1\t1\n",
     FFN_ERANGE, 5, 1, "topk 9 is more than num_experts 8"},
    {"an unknown timed part",
     "# op_name: moe\n# timed: kernels\n# moe_dtype: fp8\n# distribution: balanced\nnum_tokens\t"
     "hidden_size\tinter_size\ttopk\tnum_experts\tmoe_tp_size\tmoe_ep_size\tlatency\n1\t64\t64\t2"
     "\t8\t1\t1\t1\n",
     FFN_ESCHEMA, 2, 10,
     "'# timed: kernels': known are module (router logits to the combined output) and gemms (the "
     "grouped GEMMs with their fused activation)"},
    {"a timed part on a GEMM table", "# timed: gemms\n" GEMM_HEAD "a\tfp8\t1\t1\t1\t1\n",
     FFN_ESCHEMA, 1, 10, "'# timed:' is a MoE table's line; this is a gemm table"},
    {"experts over 2^20",
     "# op_name: moe\n# moe_dtype: fp8\n# distribution: balanced\nnum_tokens\thidden_size\t"
     "inter_size\ttopk\tnum_experts\tmoe_tp_size\tmoe_ep_size\tlatency\n1\t64\t64\t9\t2000000\t1\t"
     "1\t1\n",
     FFN_ERANGE, 5, 11, "'num_experts' must be in [1, 2^20], got '2000000'"},
};

Test(aic, each_bad_input_is_refused_at_its_position)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_case *c = &bad_cases[i];
        ffn_aic_table t;
        ffn_diag d;
        const int rc = load_text(c->text, &t, &d);
        cr_expect_eq(rc, c->err, "%s: code %d (%s), want %d", c->name, rc, d.msg, c->err);
        cr_expect_eq(d.line, c->line, "%s: line %d, want %d (%s)", c->name, d.line, c->line, d.msg);
        cr_expect_eq(d.col, c->col, "%s: column %d, want %d (%s)", c->name, d.col, c->col, d.msg);
        cr_expect_str_eq(d.msg, c->msg, "%s", c->name);
        cr_expect_str_eq(d.file, path, "%s", c->name);
        cr_expect(t.n_pts == 0 && t.n_moe == 0 && !t.pts && !t.moe, "%s: table left empty",
                  c->name);
    }
}

Test(aic, a_nul_byte_and_a_long_line_are_refused)
{
    ffn_aic_table t;
    ffn_diag d;
    const char nul[] = GEMM_HEAD "a\tfp8\t1\t1\0\t1\t1\n";
    write_file(path, nul, sizeof nul - 1);
    cr_expect_eq(load(path, &t, &d), FFN_EPARSE, "%s", d.msg);
    cr_expect_eq(d.line, 3);
    cr_expect_eq(d.col, 10);
    const size_t n = FFN_AIC_MAX_LINE + 100;
    char *s = malloc(n + 64);
    cr_assert_not_null(s);
    const size_t h = (size_t)snprintf(s, 64, "# op_name: gemm\n");
    memset(s + h, 'x', n);
    write_file(path, s, h + n);
    free(s);
    cr_expect_eq(load(path, &t, &d), FFN_ERANGE, "%s", d.msg);
    cr_expect_eq(d.line, 2);
    cr_expect(strstr(d.msg, "longer than") != NULL, "%s", d.msg);
}

Test(aic, a_truncated_gzip_is_an_error)
{
    FILE *fp = fopen(DATA "gemm-columns.tsv.gz", "rb");
    cr_assert_not_null(fp);
    unsigned char buf[4096];
    const size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    cr_assert_gt(n, 100);
    for (size_t cut = 12; cut < n; cut += 37) {
        write_file(path, buf, cut);
        ffn_aic_table t;
        ffn_diag d;
        const int rc = load(path, &t, &d);
        cr_expect_lt(rc, 0, "cut at %zu bytes of %zu loaded", cut, n);
        cr_expect_gt(strlen(d.msg), 0);
        cr_expect_eq(t.n_pts, 0);
    }
    write_file(path, buf, n - 4);
    ffn_aic_table t;
    ffn_diag d;
    cr_expect_eq(load(path, &t, &d), FFN_EPARSE, "%s", d.msg);
    cr_expect(strstr(d.msg, "truncated") != NULL, "%s", d.msg);
}

Test(aic, a_directory_and_a_missing_file_are_errors)
{
    ffn_aic_table t;
    ffn_diag d;
    cr_expect_eq(load("/tmp", &t, &d), FFN_EIO);
    cr_expect_str_eq(d.msg, "is a directory, not a file");
    cr_expect_eq(load("/nonexistent/x.tsv.gz", &t, &d), FFN_EIO);
}

Test(aic, two_hundred_thousand_rows_load)
{
    FILE *fp = fopen(path, "w");
    cr_assert_not_null(fp);
    fputs("# framework: vLLM\n# op_name: gemm\n# kernel_source: k\n"
          "gemm_dtype\tm\tn\tk\tlatency\n",
          fp);
    static const char *const dts[] = {"bfloat16", "fp8", "fp8_block"};
    for (unsigned i = 0; i < 200000; i++)
        fprintf(fp, "%s\t%u\t%u\t%u\t%.6f\n", dts[i % 3], 1 + i % 8192, 256 << (i % 8),
                128 << (i % 9), 0.001 + 1e-6 * i);
    cr_assert_eq(fclose(fp), 0);
    ffn_aic_table t;
    ffn_diag d;
    cr_assert_eq(load(path, &t, &d), 0, "%s", d.msg);
    cr_expect_eq(t.n_pts, 200000);
    cr_expect_eq(t.pts[199999].m, 1 + 199999 % 8192);
    cr_expect_float_eq(t.pts[199999].time_s, (0.001 + 1e-6 * 199999) * 1e-3, 1e-12);
    ffn_aic_free(&t);
}

Test(aic, the_heap_loader_reads_tables_and_the_older_formats)
{
    ffn_fit_point *pts;
    size_t n;
    ffn_aic_table t;
    ffn_diag d;
    ffn_diag_clear(&d);
    cr_assert_eq(ffn_fit_data_load_all(DATA "gemm-columns.tsv.gz", FFN_DT_FP16, FFN_DT_FP16, &pts,
                                       &n, &t, &d),
                 0, "%s", d.msg);
    cr_expect_eq(n, 8);
    cr_expect_eq(pts, t.pts, "the points are the table's");
    ffn_fit_data_free(pts, &t);
    cr_assert_eq(
        ffn_fit_data_load_all(DATA "gemm-lines.tsv", FFN_DT_FP16, FFN_DT_FP16, &pts, &n, NULL, &d),
        0, "%s", d.msg);
    cr_expect_eq(n, 4);
    cr_expect_eq(pts[3].m, 14);
    ffn_fit_data_free(pts, NULL);
    cr_expect_eq(
        ffn_fit_data_load_all(DATA "moe-columns.tsv", FFN_DT_FP16, FFN_DT_FP16, &pts, &n, NULL, &d),
        FFN_EUNSUPPORTED);
    cr_expect_null(pts);
    cr_assert_eq(
        ffn_fit_data_load_all(DATA "moe-columns.tsv", FFN_DT_FP16, FFN_DT_FP16, &pts, &n, &t, &d),
        0, "%s", d.msg);
    cr_expect_eq(n, 0);
    cr_expect_eq(t.n_moe, 5);
    ffn_fit_data_free(pts, &t);
    cr_assert_eq(ffn_fit_data_load_all(FFNROOF_TEST_DATA "/fit/gpu-kit-sample.csv", FFN_DT_FP16,
                                       FFN_DT_FP16, &pts, &n, &t, &d),
                 0, "%s", d.msg);
    cr_expect_gt(n, 0);
    cr_expect_eq(t.n_pts + t.n_moe, 0, "not a table");
    ffn_fit_data_free(pts, &t);
    /* the capped loader takes tables too, and says when they do not fit */
    ffn_fit_point few[4];
    cr_expect_eq(
        ffn_fit_data_load(DATA "gemm-columns.tsv", FFN_DT_FP16, FFN_DT_FP16, few, 4, &n, &d),
        FFN_ERANGE);
    cr_expect_eq(ffn_fit_data_load(DATA "gemm-lines.tsv", FFN_DT_FP16, FFN_DT_FP16, few, 4, &n, &d),
                 0, "%s", d.msg);
}

/* Run ffnroof with args; its exit code, stdout in out[cap]. */
static int run(const char *args, char *out, size_t cap)
{
    char o[300];
    snprintf(o, sizeof o, "%s.out", path);
    const int rc = cli_run(&(cli_opts){.out = o, .err = CLI_TO_STDOUT}, args);
    const char *text = cli_slurp(o);
    snprintf(out, cap, "%s", text ? text : "");
    unlink(o);
    cr_expect(!strstr(out, "AddressSanitizer") && !strstr(out, "runtime error"),
              "sanitizer report: %s", out);
    return rc;
}

Test(aic, fit_checks_and_fits_a_gemm_table_with_a_summary_per_dtype)
{
    static char out[65536];
    int rc = run("fit --hw h100-sxm --data " DATA "gemm-columns.tsv.gz --check --rows all", out,
                 sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "on 8 of 8 rows") != NULL, "%s", out);
    cr_expect(strstr(out, "\nfp8-block ") != NULL, "a line per dtype: %s", out);
    cr_expect(strstr(out, "DeepGemmFp8BlockScaledMMKernel") != NULL, "per kernel: %s", out);
    cr_expect(strstr(out, "   error\n") == NULL, "no listing without --points: %s", out);
    rc = run("fit --hw h100-sxm --data " DATA "gemm-columns.tsv --check --dtype fp8 --points "
             "--format json",
             out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "\"summary\"") != NULL, "%s", out);
    cr_expect(strstr(out, "\"points\"") != NULL, "%s", out);
    cr_expect(strstr(out, "\"rows_selected\": 1") != NULL, "--dtype fp8 keeps 1 row: %s", out);
    rc = run("fit --hw h100-sxm --data " DATA "gemm-columns.tsv --rows all --fit-points 5", out,
             sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "fitted on 5 of them") != NULL, "%s", out);
    rc = run("fit --hw h100-sxm --data " DATA "gemm-columns.tsv --kernel nope", out, sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect(strstr(out, "no kernel 'nope'") != NULL, "%s", out);
}

Test(aic, fit_refuses_to_fit_a_moe_table_and_checks_it)
{
    static char out[65536];
    int rc = run("fit --hw h100-sxm --data " DATA "moe-columns.tsv", out, sizeof out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect(strstr(out, "MoE table: fitting one is not built yet") != NULL, "%s", out);
    rc = run("fit --hw h100-sxm --data " DATA "moe-columns.tsv.gz --check", out, sizeof out);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "on 5 of 5 rows") != NULL, "%s", out);
    /* each kernel priced by the table's engine's family of its name and format */
    cr_expect(strstr(out, "fused-MoE parameters (vllm's") != NULL, "%s", out);
    cr_expect(strstr(out, "vllm_fp8moe_triton_tritonexperts") &&
                  strstr(strstr(out, "vllm_fp8moe_triton_tritonexperts"),
                         "'fp8moe_triton', range [0.89, 1.17]"),
              "%s", out);
    cr_expect(strstr(out, "'marlin', range") != NULL, "%s", out);
}

/* --engine picks another engine's families: a kernel it has no entry of that name for takes
 * the format's default, said so; on another device the range is widened; AMD's GPUs run
 * their own kernels and take the model's defaults. */
Test(aic, a_moe_check_names_the_kernel_family_behind_each_row)
{
    static char out[65536];
    int rc = run("fit --hw h100-sxm --engine sglang --data " DATA "moe-columns.tsv --check", out,
                 sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "fused-MoE parameters (sglang's") != NULL, "%s", out);
    cr_expect(strstr(out, "'fused_moe_triton' (the format's default), range") != NULL, "%s", out);
    cr_expect(strstr(out, "kernels: sglang's profile applied") == NULL,
              "the families are fitted against the spec as it is: %s", out);
    rc = run("fit --hw b200 --data " DATA "moe-columns.tsv --check", out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "(widened)") != NULL, "%s", out);
    /* an AMD GPU: the engine's AMD entries (ROCm aiter's kernels), by the format where there
     * is one, else by the activations' class (bf16 for int4 weight-only on the MI300X); the
     * H100 entries never */
    rc = run("fit --hw mi300x --data " DATA "moe-columns.tsv --check", out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "'aiter_fmoe' (the format's default)") != NULL, "%s", out);
    cr_expect(strstr(out, "'aiter_fmoe' (its bf16 entry: none for int4)") != NULL, "%s", out);
    cr_expect(strstr(out, "'fp8moe_triton'") == NULL, "%s", out);
    rc = run("fit --hw h100-sxm --data " DATA "moe-columns.tsv --check --points --format json", out,
             sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "\"parameters\": \"fp8moe_triton\"") != NULL, "%s", out);
    cr_expect(strstr(out, "\"range_p10\"") != NULL, "%s", out);
}

/* `# timed: gemms` (a kernel tuner's table, ROCm aiter's) compares the rows with the grouped
 * GEMMs' part of the prediction: the same rows predict less than the whole module, by the
 * module's fixed cost at least. */
Test(aic, a_table_of_the_grouped_gemms_is_checked_against_their_part)
{
    static char out[2][65536];
    static const char *const timed[2] = {"module", "gemms"};
    double pred[2][2];
    for (int w = 0; w < 2; w++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "# op_name: moe\n# timed: %s\n# moe_dtype: bfloat16\n# distribution: balanced\n"
                 "# moe_tp_size: 1\n# moe_ep_size: 1\nkernel_source\tnum_tokens\thidden_size\t"
                 "inter_size\ttopk\tnum_experts\tlatency\nk\t16\t4096\t1024\t8\t64\t0.1\n"
                 "k\t1024\t4096\t1024\t8\t64\t0.5\n",
                 timed[w]);
        write_file(path, text, strlen(text));
        char cmd[512];
        snprintf(cmd, sizeof cmd, "fit --hw h100-sxm --data %s --check --points --format json",
                 path);
        cr_assert_eq(run(cmd, out[w], sizeof out[w]), 0, "%s", out[w]);
        const char *p = out[w];
        for (int r = 0; r < 2; r++) {
            p = strstr(p, "\"predicted_s\": ");
            cr_assert_not_null(p, "%s", out[w]);
            p += strlen("\"predicted_s\": ");
            pred[w][r] = strtod(p, NULL);
        }
    }
    for (int r = 0; r < 2; r++)
        cr_expect(pred[1][r] > 0 && pred[1][r] < pred[0][r] - 5e-6, "row %d: gemms %g, module %g",
                  r, pred[1][r], pred[0][r]);
}

/* A fitted kernel family reproduces its own rows within its stated range: the shipped vLLM
 * Triton fp8-block family on its 5,988 rows of the H100 table, 80% of them inside p10-p90 by
 * construction (a family whose parameters or range drift from the model fails this). */
Test(aic, a_shipped_moe_family_reproduces_its_table_within_its_range, .timeout = 600)
{
    static char out[65536];
    const int rc = run("fit --hw h100-sxm --data " FFNROOF_SOURCE_DIR
                       "/data/calib/aic-h100_sxm_moe_vllm_0.24.0_moe.tsv.gz --check "
                       "--kernel vllm_fp8moe_triton_tritonexperts --format json",
                       out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    const char *all = strstr(out, "\"dtype\": \"all\"");
    cr_assert_not_null(all, "%s", out);
    double med = -1, cov = -1;
    const char *m = strstr(all, "\"median_abs_error\": "),
               *c = strstr(all, "\"coverage_p10_p90\": ");
    cr_assert(m && c, "%s", all);
    med = strtod(m + strlen("\"median_abs_error\": "), NULL);
    cov = strtod(c + strlen("\"coverage_p10_p90\": "), NULL);
    cr_expect(med > 0 && med < 0.12, "median |e| %g", med);
    cr_expect(cov > 0.76 && cov < 0.84, "coverage %g", cov);
}

Test(aic, fit_refuses_an_op_it_does_not_read_with_its_position)
{
    static char out[4096];
    const char *s = "# op_name: mla_bmm\nbatch_size\tlatency\n1\t1\n";
    write_file(path, s, strlen(s));
    char args[512];
    snprintf(args, sizeof args, "fit --hw h100-sxm --data %s", path);
    cr_expect_eq(run(args, out, sizeof out), 2, "%s", out);
    char want[512];
    snprintf(want, sizeof want,
             "%s:1:12: op 'mla_bmm' is not read (gemm, moe, context_attention, "
             "generation_attention, all_reduce and NCCL tables with an op_name column are)",
             path);
    cr_expect(strstr(out, want) != NULL, "%s", out);
}
