/* `ffnroof sweep`: `predict` over a grid - models x devices x dtypes x TP x EP x phases x
 * batches x sequences - streamed as CSV or JSON lines, one row per point with predict's fields
 * (the rows are what `ffnroof predict --format csv` prints for the same point). Rows are
 * flushed as they are written, so a consumer sees them at once and an interrupt (SIGINT) loses
 * none: the current row is finished, a message says how far the sweep got, and the exit code is
 * 130. A progress bar goes to stderr when stderr is a terminal and the rows go elsewhere. */
#define _GNU_SOURCE
#include "cli.h"
#include "vocab.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ffnroof/json.h"
#include "ffnroof/limits.h"
#include "ffnroof/plan_write.h"
#include "ffnroof/plan.h"
#include "ffnroof/predict_write.h"
#include "ffnroof/scenario.h"
#include "ffnroof/sweep.h"

#define CMD "sweep"

static void usage(FILE *fp)
{
    fputs("usage: ffnroof sweep --scenario FILE [options]\n"
          "       ffnroof sweep --model NAME[,NAME..] --hw NAME[,NAME..] [options]\n"
          "\n"
          "Evaluate `predict` over a grid and stream one row per point, with the fields\n"
          "as `ffnroof predict --format csv` (or its JSON runs[] objects, one per line).\n"
          "Flags override the scenario's `sweep:` grid (docs/formats-scenario.md).\n"
          "\n",
          fp);
    ffn_cli_help_words(
        fp, CMD, (const int[]){FFN_O_SCENARIO,   FFN_O_MODEL,      FFN_O_HW,           FFN_O_ENGINE,
                               FFN_O_PHASE,      FFN_O_BATCH,      FFN_O_PROMPT,       FFN_O_TP,
                               FFN_O_EP,         FFN_O_DTYPE,      FFN_O_KV_DTYPE,     FFN_O_CHUNK,
                               FFN_O_GROUP_SIZE, FFN_O_ZERO_POINT, FFN_O_ACT_IO_DTYPE, FFN_O_FUSED,
                               FFN_O_UNFUSED,    FFN_O_WEIGHTS,    FFN_O_ONCHIP,       0});
    fputs("MoE routing:\n", fp);
    ffn_cli_help_words(fp, CMD,
                       (const int[]){FFN_O_ZIPF, FFN_O_ROUTING_ALPHA, FFN_O_TRIALS, FFN_O_SEED,
                                     FFN_O_CAPACITY_FACTOR, FFN_O_DEVICES_PER_NODE, FFN_O_EP_UNEVEN,
                                     FFN_O_GENERIC_MOE, 0});
    fputs("Output:\n"
          "  --step                the whole step plan prices at each point (FFN, attention,\n"
          "                        all-reduce, LM head) with its p10-p90 range and the memory\n"
          "                        per device and whether it fits, in place of the FFN alone\n"
          "                        (decode: --prompt is the KV length; TP x EP devices,\n"
          "                        attention DP over the EP ranks)\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_FORMAT, FFN_O_OUT, 0});
    fputs("  --no-progress         no progress bar (it is shown only on a terminal)\n"
          "  --max-points N        compute a grid of up to N points (default: 10^9; a larger\n"
          "                        grid is refused before anything is written)\n"
          "  -h, --help            this help\n"
          "\n"
          "GRID: values and ranges, comma-separated: 1,8,64  1-1000 (step 1)\n"
          "  16-256:16 (step 16)  1-4096:x2 (geometric). Configurations a model does not\n"
          "allow (a TP that does not divide its sizes, EP on a dense model) are skipped\n"
          "with a note on stderr.\n"
          "Exit codes: 0 ok, 1 failed, 2 bad usage or bad input, 130 interrupted.\n",
          fp);
}

/* Saturating at UINT64_MAX: a grid's size is compared with a limit, never wrapped. */
static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A grid flag into a fresh array (replaces *out). */
static int grid_opt(int o, const char *s, uint64_t **out, size_t *n)
{
    char why[160], opt[48];
    uint64_t lo, hi;
    ffn_cli_word_bounds(o, &lo, &hi);
    snprintf(opt, sizeof opt, "--%s", ffn_cli_opt_name(o));
    size_t room = 1024;
    for (;;) {
        if (room > FFN_SC_MAX_GRID) room = FFN_SC_MAX_GRID;
        uint64_t *a = malloc(room * sizeof *a);
        if (!a) return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
        int rc = ffn_grid_parse(s, lo, hi, a, room, n, why, sizeof why);
        if (!rc) {
            free(*out);
            *out = a;
            return 0;
        }
        free(a);
        if (rc != FFN_ENOSPACE || room >= FFN_SC_MAX_GRID)
            return ffn_cli_usage(CMD, "%s: %s", opt, why);
        room *= 16;
    }
}

static void progress(uint64_t done, uint64_t total, bool final)
{
    const int width = 40;
    double f = total ? (double)done / (double)total : 1.0;
    int fill = (int)(f * width);
    char bar[64];
    for (int i = 0; i < width; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[width] = '\0';
    fprintf(stderr, "\r[%s] %3.0f%% %llu/%llu points", bar, 100.0 * f, (unsigned long long)done,
            (unsigned long long)total);
    if (final) fputc('\n', stderr);
    fflush(stderr);
}

int ffn_cmd_sweep(int argc, char **argv)
{
    static const int accept[] = {FFN_O_SCENARIO,
                                 FFN_O_ENGINE,
                                 FFN_O_MODEL,
                                 FFN_O_HW,
                                 FFN_O_PHASE,
                                 FFN_O_BATCH,
                                 FFN_O_SEQ,
                                 FFN_O_PROMPT,
                                 FFN_O_GROUP,
                                 FFN_O_TP,
                                 FFN_O_EP,
                                 FFN_O_DTYPE,
                                 FFN_O_CHUNK,
                                 FFN_O_GROUP_SIZE,
                                 FFN_O_ZERO_POINT,
                                 FFN_O_ACT_IO_DTYPE,
                                 FFN_O_KV_DTYPE,
                                 FFN_O_FUSED,
                                 FFN_O_UNFUSED,
                                 FFN_O_ZIPF,
                                 FFN_O_ROUTING_ALPHA,
                                 FFN_O_TRIALS,
                                 FFN_O_SEED,
                                 FFN_O_CAPACITY_FACTOR,
                                 FFN_O_DEVICES_PER_NODE,
                                 FFN_O_EP_UNEVEN,
                                 FFN_O_GENERIC_MOE,
                                 FFN_O_FORMAT,
                                 FFN_O_OUT,
                                 FFN_O_NO_PROGRESS,
                                 FFN_O_STEP,
                                 FFN_O_MAX_POINTS,
                                 FFN_O_WEIGHTS,
                                 FFN_O_ONCHIP,
                                 0};
    const char *val[FFN_O_END - FFN_O_FIRST] = {0};
    int fused = -1;
    int c;
    ffn_cli_seen seen = {0};
    while ((c = ffn_cli_getopt(CMD, argc, argv, accept, &seen, NULL)) != -1) {
        if (c == -2) return FFN_EXIT_USAGE;
        if (c == FFN_O_FUSED) fused = 1;
        if (c == FFN_O_UNFUSED) fused = 0;
        const int r = ffn_cli_collect(CMD, c, argv, val, usage);
        if (r >= 0) return r;
    }
    if (optind < argc) return ffn_cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
#define V(o) val[(o)-FFN_O_FIRST]

    static ffn_scenario sc;
    int rc = 0;
    {
        int r = ffn_cli_scenario_start(CMD, V(FFN_O_SCENARIO), V(FFN_O_MODEL), V(FFN_O_HW), &sc);
        if (r) return r;
    }
    ffn_plan_opts *o = &sc.plan;
    bool json = false;
    if (V(FFN_O_PHASE) && (rc = ffn_cli_phases(CMD, V(FFN_O_PHASE), &sc.sweep_phases))) goto out;
    if ((V(FFN_O_BATCH) && (rc = grid_opt(FFN_O_BATCH, V(FFN_O_BATCH), &sc.batch, &sc.n_batch))) ||
        (V(FFN_O_SEQ) && (rc = grid_opt(FFN_O_SEQ, V(FFN_O_SEQ), &sc.seq, &sc.n_seq))) ||
        (V(FFN_O_PROMPT) && (rc = grid_opt(FFN_O_PROMPT, V(FFN_O_PROMPT), &sc.seq, &sc.n_seq))) ||
        (V(FFN_O_TP) && (rc = grid_opt(FFN_O_TP, V(FFN_O_TP), &sc.sweep_tp, &sc.n_sweep_tp))) ||
        (V(FFN_O_EP) && (rc = grid_opt(FFN_O_EP, V(FFN_O_EP), &sc.sweep_ep, &sc.n_sweep_ep))))
        goto out;
    if (V(FFN_O_DTYPE)) {
        sc.n_sweep_dtype = 0;
        const char *p = V(FFN_O_DTYPE);
        for (;;) {
            const char *comma = strchr(p, ',');
            size_t l = comma ? (size_t)(comma - p) : strlen(p);
            char item[32];
            if (l == 0 || l >= sizeof item || sc.n_sweep_dtype >= FFN_SC_MAX_DTYPES) {
                rc = ffn_cli_usage(CMD, "--dtype: bad list '%s' (at most %d entries)",
                                   V(FFN_O_DTYPE), FFN_SC_MAX_DTYPES);
                goto out;
            }
            memcpy(item, p, l);
            item[l] = '\0';
            if (ffn_dtype_pair_parse(item, &sc.sweep_wdtype[sc.n_sweep_dtype],
                                     &sc.sweep_adtype[sc.n_sweep_dtype])) {
                rc = ffn_cli_usage(CMD,
                                   "--dtype: '%s' is not a dtype (fp32, tf32, bf16, fp16, "
                                   "fp8, int8, int4) or a pair W/A",
                                   item);
                goto out;
            }
            sc.n_sweep_dtype++;
            if (!comma) break;
            p = comma + 1;
        }
    }
    uint64_t group = 0;
    ffn_cli_seen late = {0};
    ffn_cli_bind_word(&late, FFN_O_CHUNK, &o->chunk);
    ffn_cli_bind_word(&late, FFN_O_GROUP_SIZE, &group);
    ffn_cli_bind_word(&late, FFN_O_GROUP, &group);
    ffn_cli_bind_routing(&late, &o->moe);
    if ((rc = ffn_cli_store_collected(CMD, &late, val))) goto out;
    if (group) o->group_size = (unsigned)group;
    if (V(FFN_O_ZERO_POINT)) o->zero_point = true;
    if (V(FFN_O_ACT_IO_DTYPE)) {
        if ((rc = ffn_cli_dtype(CMD, "--act-io-dtype", V(FFN_O_ACT_IO_DTYPE), &o->act_io_dtype)))
            goto out;
        if (o->act_io_dtype != FFN_DT_FP32 && o->act_io_dtype != FFN_DT_BF16 &&
            o->act_io_dtype != FFN_DT_FP16) {
            rc = ffn_cli_usage(CMD, "--act-io-dtype must be fp32, bf16 or fp16; got '%s'",
                               V(FFN_O_ACT_IO_DTYPE));
            goto out;
        }
    }
    if (fused >= 0) o->fused = fused == 1;
    if (V(FFN_O_WEIGHTS) && ffn_weights_parse(V(FFN_O_WEIGHTS), &o->weights)) {
        rc = ffn_cli_usage(CMD, "--weights: '%s' is not hot, cold or auto", V(FFN_O_WEIGHTS));
        goto out;
    }
    if (V(FFN_O_ONCHIP)) o->onchip = true;
    if (V(FFN_O_KV_DTYPE)) {
        if ((rc = ffn_cli_dtype(CMD, "--kv-dtype", V(FFN_O_KV_DTYPE), &o->kv_dtype))) goto out;
        if (!V(FFN_O_STEP)) {
            rc = ffn_cli_usage(CMD, "--kv-dtype needs --step (the FFN alone has no KV cache)");
            goto out;
        }
    }
    if (V(FFN_O_FORMAT)) {
        if (!strcmp(V(FFN_O_FORMAT), "json"))
            json = true;
        else if (strcmp(V(FFN_O_FORMAT), "csv")) {
            rc = ffn_cli_usage(CMD, "--format must be csv or json (JSON lines); got '%s'",
                               V(FFN_O_FORMAT));
            goto out;
        }
    }
    if (ffn_scenario_sweep_defaults(&sc)) {
        rc = ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
        goto out;
    }

    /* The grid's size before anything is loaded or written: each axis is capped, their
     * product is not, and six lines of scenario can ask for 10^14 rows. */
    uint64_t max_points = FFN_MAX_SWEEP_POINTS;
    if (V(FFN_O_MAX_POINTS) &&
        (rc = ffn_cli_u64(CMD, "--max-points", V(FFN_O_MAX_POINTS), 1, UINT64_MAX, &max_points)))
        goto out;
    {
        const uint64_t per_cfg =
            sat_add(sc.sweep_phases & FFN_SWEEP_PREFILL ? sat_mul(sc.n_batch, sc.n_seq) : 0,
                    sc.sweep_phases & FFN_SWEEP_DECODE ? sc.n_batch : 0);
        const uint64_t points = sat_mul(
            sat_mul(sat_mul(per_cfg, sc.n_sweep_dtype), sat_mul(sc.n_sweep_tp, sc.n_sweep_ep)),
            sat_mul(sc.n_models, sc.n_hws));
        if (points > max_points) {
            rc = ffn_cli_fail(FFN_EXIT_USAGE, CMD,
                              "%s%sthe grid has %s%llu points, more than the limit of %llu; narrow "
                              "it, or raise the limit with --max-points N",
                              sc.path[0] ? sc.path : "", sc.path[0] ? ": " : "",
                              points == UINT64_MAX ? "more than " : "", (unsigned long long)points,
                              (unsigned long long)max_points);
            goto out;
        }
    }

    static ffn_model models[FFN_SC_MAX_REFS];
    static ffn_hw hws[FFN_SC_MAX_REFS];
    if ((rc = ffn_cli_engine(CMD, V(FFN_O_ENGINE)))) goto out;
    if ((rc = ffn_cli_load_scenario_inputs(CMD, &sc, hws, models))) goto out;
    ffn_sweep_grid g;
    memset(&g, 0, sizeof g);
    ffn_run_default(&g.base);
    g.base.chunk = o->chunk;
    g.base.group_size = o->group_size;
    g.base.zero_point = o->zero_point;
    g.base.act_io_dtype = o->act_io_dtype;
    g.base.fused = o->fused;
    g.base.weights = o->weights;
    g.base.onchip = o->onchip;
    g.base.moe = o->moe;
    g.phases = sc.sweep_phases;
    g.batch = sc.batch, g.n_batch = sc.n_batch;
    g.seq = sc.seq, g.n_seq = sc.n_seq;
    g.tp = sc.sweep_tp, g.n_tp = sc.n_sweep_tp;
    g.ep = sc.sweep_ep, g.n_ep = sc.n_sweep_ep;
    g.wdtype = sc.sweep_wdtype, g.adtype = sc.sweep_adtype, g.n_dtype = sc.n_sweep_dtype;
    const uint64_t per_pair = ffn_sweep_count(&g);
    const uint64_t total = per_pair * sc.n_models * sc.n_hws;
    if (total == 0) {
        rc = ffn_cli_usage(CMD, "the grid is empty");
        goto out;
    }

    FILE *fp = stdout;
    if (V(FFN_O_OUT) && strcmp(V(FFN_O_OUT), "-")) {
        fp = fopen(V(FFN_O_OUT), "w");
        if (!fp) {
            rc = ffn_cli_fail(FFN_EXIT_USAGE, CMD, "cannot write '%s': %s", V(FFN_O_OUT),
                              strerror(errno));
            goto out;
        }
    }
    /* Line buffering: each row reaches the file or pipe as soon as it is complete. */
    static char obuf[1 << 16];
    setvbuf(fp, obuf, _IOLBF, sizeof obuf);
    const bool show =
        !V(FFN_O_NO_PROGRESS) && isatty(STDERR_FILENO) && !isatty(fileno(fp)) && total >= 1000;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old);

    const bool step_mode = V(FFN_O_STEP) != NULL;
    if (!json && step_mode)
        ffn_sweep_step_csv_header(fp);
    else if (!json)
        ffn_write_predict_csv_header(fp);
    uint64_t done = 0, skipped = 0, notes = 0;
    double next_bar = show ? now_s() + 0.1 : 0;
    static ffn_result r;
    bool io_error = false;
    for (size_t mi = 0; mi < sc.n_models && !interrupted && !io_error; mi++) {
        ffn_params prm;
        const bool counted = ffn_model_params(&models[mi], &prm) == 0;
        for (size_t hi = 0; hi < sc.n_hws && !interrupted && !io_error; hi++) {
            ffn_sweep_iter it;
            ffn_sweep_begin(&it, &models[mi], &hws[hi], &g);
            it.runs_only = step_mode; /* the step eval predicts each point itself */
            for (;;) {
                ffn_diag d;
                ffn_diag_clear(&d);
                int k = ffn_sweep_next(&it, &r, &d);
                if (k == 0) break;
                if (k < 0) {
                    if (notes++ < 20)
                        fprintf(stderr, "ffnroof sweep: skipping %s on %s (tp %llu, ep %llu): %s\n",
                                models[mi].name, hws[hi].name, (unsigned long long)it.run.tp,
                                (unsigned long long)it.run.ep, d.msg);
                    continue;
                }
                if (step_mode) {
                    static ffn_sweep_step ss;
                    /* the KV cache in the activations' dtype, as plan's --dtype and --adtype
                     * set it, unless --kv-dtype says otherwise */
                    if (!V(FFN_O_KV_DTYPE)) o->kv_dtype = r.run.adtype;
                    int e = counted ? ffn_sweep_step_eval(&models[mi], &prm, &hws[hi], o, &r.run,
                                                          &ss, &d)
                                    : ffn_diag_set(&d, FFN_EINVAL, NULL, 0, 0,
                                                   "the model's parameters do not count");
                    if (e) {
                        if (notes++ < 20)
                            fprintf(stderr,
                                    "ffnroof sweep: skipping %s on %s (%s, batch %llu): %s\n",
                                    models[mi].name, hws[hi].name, ffn_phase_name(r.run.phase),
                                    (unsigned long long)r.run.batch, d.msg);
                        skipped++;
                        continue;
                    }
                    if ((json ? ffn_sweep_step_json(fp, &models[mi], &hws[hi], &r.run, &ss)
                              : ffn_sweep_step_csv_row(fp, &models[mi], &hws[hi], &r.run, &ss)))
                        io_error = true;
                } else if (json) {
                    ffn_json j;
                    ffn_json_init(&j, fp, false);
                    ffn_json_obj_begin(&j, NULL);
                    ffn_json_str(&j, "model", models[mi].name);
                    ffn_json_str(&j, "hw", hws[hi].name);
                    ffn_json_run(&j, "run", &r);
                    ffn_json_obj_end(&j);
                    if (ffn_json_finish(&j)) io_error = true;
                } else if (ffn_write_predict_csv_row(fp, &models[mi], &hws[hi], &r)) {
                    io_error = true;
                }
                done++;
                if (interrupted || io_error) break;
                if (show && (done & 1023) == 0 && now_s() >= next_bar) {
                    progress(done + skipped + it.skipped, total, false);
                    next_bar = now_s() + 0.1;
                }
            }
            skipped += it.skipped;
        }
    }
    if (fflush(fp) != 0 || ferror(fp)) io_error = true;
    if (show) progress(interrupted ? done + skipped : total, total, true);
    sigaction(SIGINT, &old, NULL);
    if (fp != stdout && fclose(fp) != 0) io_error = true;
    if (io_error) {
        const int e = errno;
        /* a full disk or a file-size limit: no truncated file is left to be mistaken for a
         * result (an interrupt, by contrast, keeps its whole rows) */
        if (fp != stdout) unlink(V(FFN_O_OUT));
        rc = ffn_cli_fail(FFN_EXIT_FAIL, CMD, "cannot write the rows: %s", strerror(e));
        goto out;
    }
    if (interrupted) {
        rc = ffn_cli_fail(130, CMD,
                          "interrupted after %llu of %llu points; the %llu rows written "
                          "are complete",
                          (unsigned long long)(done + skipped), (unsigned long long)total,
                          (unsigned long long)done);
        goto out;
    }
    if (skipped)
        fprintf(stderr,
                "ffnroof sweep: %llu of %llu points skipped (configurations the model "
                "does not allow)\n",
                (unsigned long long)skipped, (unsigned long long)total);
    if (done == 0) {
        rc = ffn_cli_fail(FFN_EXIT_USAGE, CMD, "no point of the grid is valid");
        goto out;
    }
    rc = FFN_EXIT_OK;
out:
    ffn_scenario_release(&sc);
    return rc;
#undef V
}
