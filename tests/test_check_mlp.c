/* Plumbing of the MLP operator check (bench/bench_check_mlp.c, docs/validation.md): the
 * measured file in data/check/ parses and holds what its README says, a hand-picked row carries
 * the file's values, the op mapping matches the simulator's own unfused layer, and the loader
 * rejects malformed input. It deliberately asserts no accuracy threshold: accuracy is reported
 * in docs/validation.md, not tuned. */
#define FFN_MLP_CHECK_NO_MAIN
#include "../bench/bench_check_mlp.c"

#include <criterion/criterion.h>
#include <unistd.h>
#include "ffnroof/hw_load.h"

#define MLP_CHECK_CSV FFNROOF_SOURCE_DIR "/data/check/h200-torch-fp16-mlp.csv"

static void load_ok(const char *path, mlp_check_row **rows, size_t *n)
{
    ffn_diag diag;
    int rc = mlp_check_load(path, rows, n, &diag);
    cr_assert_eq(rc, 0, "%s: %s", path, diag.msg);
    cr_assert_gt(*n, 0);
}

static void load_hw(const char *name, ffn_hw *hw)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/hw/%s.yaml", FFNROOF_SOURCE_DIR, name);
    ffn_diag diag;
    cr_assert_eq(ffn_hw_load(path, hw, &diag), 0, "%s: %s", path, diag.msg);
}

static const mlp_check_row *find_row(const mlp_check_row *rows, size_t n, const char *model,
                                     uint64_t tp, uint64_t tokens)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].model, model) == 0 && rows[i].tp == tp && rows[i].tokens == tokens)
            return &rows[i];
    return NULL;
}

Test(mlp_check, file_parses_and_is_consistent)
{
    mlp_check_row *rows;
    size_t n;
    load_ok(MLP_CHECK_CSV, &rows, &n);
    cr_assert_eq(n, 126); /* data/check/README.md: Llama-2-7B/70B at tp 1-8 and phi-2, 14 T each */
    bool seen_gated = false, seen_plain = false;
    for (size_t i = 0; i < n; i++) {
        const mlp_check_row *r = &rows[i];
        /* the run timed tensor-parallel degrees 1, 2, 4, 8 and up to 4096 tokens */
        cr_assert(r->tp == 1 || r->tp == 2 || r->tp == 4 || r->tp == 8, "tp %llu",
                  (unsigned long long)r->tp);
        cr_assert(r->tokens >= 1 && r->tokens <= 4096);
        cr_assert_str_eq(r->commit, "ffnroof");
        seen_gated |= r->gated;
        seen_plain |= !r->gated;
        /* no duplicate (model, tp, tokens) */
        for (size_t j = i + 1; j < n; j++)
            cr_assert(!(strcmp(rows[j].model, r->model) == 0 && rows[j].tp == r->tp &&
                        rows[j].tokens == r->tokens),
                      "duplicate row %s tp%llu T%llu", r->model, (unsigned long long)r->tp,
                      (unsigned long long)r->tokens);
    }
    cr_assert(seen_gated && seen_plain, "expect gated (Llama-2) and GELU (phi-2) rows");
    free(rows);
}

Test(mlp_check, hand_picked_row_matches_file_and_predicts)
{
    mlp_check_row *rows;
    size_t n;
    load_ok(MLP_CHECK_CSV, &rows, &n);
    /* data/check/h200-torch-fp16-mlp.csv, Llama-2-7B, 1 worker, 4096 tokens: medians 1.05784,
     * 0.26908, 0.47081 ms. */
    const mlp_check_row *r = find_row(rows, n, "meta-llama/Llama-2-7b-hf", 1, 4096);
    cr_assert_not_null(r);
    cr_assert_eq(r->d, 4096);
    cr_assert_eq(r->f, 11008);
    cr_assert(r->gated);
    cr_assert_float_eq(r->measured_s[MLP_CHECK_UP], 1.05784e-3, 1e-12);
    cr_assert_float_eq(r->measured_s[MLP_CHECK_ACT], 0.26908e-3, 1e-12);
    cr_assert_float_eq(r->measured_s[MLP_CHECK_DOWN], 0.47081e-3, 1e-12);

    ffn_hw hw;
    load_hw("h200", &hw);
    ffn_op ops[MLP_CHECK_NOPS];
    mlp_check_ops(&hw, r, ops);
    /* shapes: [4096, 4096] x [4096, 2*11008] and [4096, 11008] x [11008, 4096] */
    cr_assert_eq(ops[MLP_CHECK_UP].m, 4096);
    cr_assert_eq(ops[MLP_CHECK_UP].n, 2 * 11008);
    cr_assert_eq(ops[MLP_CHECK_UP].k, 4096);
    cr_assert_eq(ops[MLP_CHECK_DOWN].n, 4096);
    cr_assert_eq(ops[MLP_CHECK_DOWN].k, 11008);
    cr_assert_float_eq(ops[MLP_CHECK_UP].flops, 2.0 * 4096 * 22016 * 4096, 1.0);
    for (int o = 0; o < MLP_CHECK_NOPS; o++) {
        cr_assert(isfinite(ops[o].predicted_s) && ops[o].predicted_s > 0, "%s",
                  mlp_check_op_names[o]);
        /* the realistic prediction never beats the ideal roofline */
        cr_assert_geq(ops[o].predicted_s, ops[o].roofline_s * (1 - 1e-12));
    }
    free(rows);
}

/* The mapping must count what sim/ffn.c's unfused layer counts for the same shard: GELU rows
 * op for op; gated rows with one gate+up GEMM equal to sim's gate plus up. */
Test(mlp_check, op_mapping_matches_unfused_layer)
{
    mlp_check_row *rows;
    size_t n;
    load_ok(MLP_CHECK_CSV, &rows, &n);
    ffn_hw hw;
    load_hw("h200", &hw);
    const mlp_check_row *picks[] = {find_row(rows, n, "microsoft/phi-2", 1, 128),
                                    find_row(rows, n, "meta-llama/Llama-2-70b-hf", 8, 16)};
    for (size_t p = 0; p < 2; p++) {
        const mlp_check_row *r = picks[p];
        cr_assert_not_null(r);
        ffn_run run;
        ffn_run_default(&run);
        run.fused = false;
        run.wdtype = run.adtype = FFN_DT_FP16;
        run.tp = r->tp;
        ffn_layer_cost layer;
        cr_assert_eq(
            ffn_dense_layer(&hw, &run, r->d, r->f, mlp_check_act(r), false, r->tokens, &layer), 0);
        double up_flops = 0, up_bytes = 0;
        const ffn_op *act = NULL, *down = NULL;
        for (int i = 0; i < layer.n_ops; i++) {
            const ffn_op *op = &layer.ops[i];
            if (strcmp(op->name, "gate") == 0 || strcmp(op->name, "up") == 0) {
                up_flops += op->flops;
                up_bytes += op->bytes;
            } else if (strcmp(op->name, "act") == 0)
                act = op;
            else if (strcmp(op->name, "down") == 0)
                down = op;
        }
        cr_assert(act && down);
        ffn_op ops[MLP_CHECK_NOPS];
        mlp_check_ops(&hw, r, ops);
        cr_assert_float_eq(ops[MLP_CHECK_UP].flops, up_flops, 1e-6 * up_flops);
        /* one fused GEMM reads x once where gate and up read it twice */
        double x_bytes = (double)r->tokens * (double)r->d * 2.0;
        cr_assert_float_eq(ops[MLP_CHECK_UP].bytes, up_bytes - (r->gated ? x_bytes : 0),
                           1e-9 * up_bytes);
        cr_assert_float_eq(ops[MLP_CHECK_ACT].flops, act->flops, 1e-9 * act->flops);
        cr_assert_float_eq(ops[MLP_CHECK_ACT].bytes, act->bytes, 1e-9 * act->bytes);
        cr_assert_float_eq(ops[MLP_CHECK_ACT].predicted_s, act->predicted_s, 1e-15);
        cr_assert_float_eq(ops[MLP_CHECK_DOWN].predicted_s, down->predicted_s, 1e-15);
    }
    free(rows);
}

Test(mlp_check, summary_statistics_by_hand)
{
    const double err[] = {-0.5, 0.05, 0.2, -0.09};
    double work[4];
    mlp_check_stats s;
    mlp_check_summarise(err, 4, work, &s);
    cr_assert_eq(s.n, 4);
    cr_assert_float_eq(s.median_abs, (0.09 + 0.2) / 2, 1e-12);
    cr_assert_float_eq(s.median_signed, (-0.09 + 0.05) / 2, 1e-12);
    cr_assert_float_eq(s.p90_abs, 0.5, 1e-12); /* nearest rank: ceil(0.9 * 4) = 4th */
    cr_assert_float_eq(s.max_abs, 0.5, 1e-12);
    cr_assert_float_eq(s.within10, 0.5, 1e-12);
    cr_assert_float_eq(s.within35, 0.75, 1e-12);
    cr_assert_float_eq(mlp_check_rel_err(1.5, 1.0), 0.5, 1e-12);
    cr_assert_float_eq(mlp_check_rel_err(0.5, 1.0), -0.5, 1e-12);
}

/* Write text to a fresh temporary file; path receives its name. */
static void write_tmp(char *path, size_t n, const char *text)
{
    snprintf(path, n, "/tmp/ffnroof-mlp-check-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *fp = fdopen(fd, "w");
    cr_assert_not_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static int load_text(const char *text, ffn_diag *diag)
{
    char path[64];
    write_tmp(path, sizeof path, text);
    mlp_check_row *rows = (mlp_check_row *)1;
    size_t n = 99;
    int rc = mlp_check_load(path, &rows, &n, diag);
    if (rc) {
        cr_assert_null(rows);
        cr_assert_eq(n, 0);
    } else
        free(rows);
    unlink(path);
    return rc;
}

Test(mlp_check, loader_rejects_bad_input)
{
    ffn_diag diag;
    const char *good = "m,abcdef12,2,16,4096,11008,True,0.1,0.01,0.05\n";
    char text[1024];
    snprintf(text, sizeof text, "%s\n%s", MLP_CHECK_HEADER, good);
    cr_assert_eq(load_text(text, &diag), 0, "%s", diag.msg);

    cr_assert_eq(load_text("num_tokens,foo\n", &diag), FFN_ESCHEMA);
    cr_assert_eq(diag.line, 1);
    cr_assert_eq(load_text("", &diag), FFN_ESCHEMA);

    static const struct {
        const char *row;
        int rc, col;
    } bad[] = {
        {"m,abcdef12,2,16,4096,11008,True,0.1,0.01\n", FFN_EPARSE, 1},        /* missing field */
        {"m,abcdef12,2,16,4096,11008,True,0.1,0.01,0.05,9\n", FFN_EPARSE, 1}, /* extra */
        {"m,abcdef12,0,16,4096,11008,True,0.1,0.01,0.05\n", FFN_ESCHEMA, 3},  /* tp 0 */
        {"m,abcdef12,2,-16,4096,11008,True,0.1,0.01,0.05\n", FFN_ESCHEMA, 4}, /* negative */
        {"m,abcdef12,2,16,4096,11008,yes,0.1,0.01,0.05\n", FFN_ESCHEMA, 7},   /* bool */
        {"m,abcdef12,2,16,4096,11008,True,0.1,nan,0.05\n", FFN_ESCHEMA, 9},   /* NaN */
        {"m,abcdef12,2,16,4096,11008,True,0.1,0.01,-1\n", FFN_ESCHEMA, 10},   /* negative */
        {"m,abcdef12,3,16,4096,11008,True,0.1,0.01,0.05\n", FFN_ESCHEMA, 3},  /* tp 3 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s\n%s%s", MLP_CHECK_HEADER, good, bad[i].row);
        cr_assert_eq(load_text(text, &diag), bad[i].rc, "case %zu: %s", i, diag.msg);
        cr_assert_eq(diag.line, 3, "case %zu", i);
        cr_assert_eq(diag.col, bad[i].col, "case %zu: col %d", i, diag.col);
    }

    mlp_check_row *rows;
    size_t n;
    cr_assert_eq(mlp_check_load("/nonexistent/mlp-check.csv", &rows, &n, &diag), FFN_EIO);
    cr_assert_null(rows);
}
