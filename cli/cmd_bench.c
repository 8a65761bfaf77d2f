/* `ffnroof bench`: ffnroof's FFN kernels (dense and MoE) on this host for a model's shapes or a
 * given shape, side by side with the library peers, under PAPI counters, against the roofline
 * and the simulator's prediction on a spec (default: the last calibration, made first when there
 * is none). The measuring is measure/bench/ (bench_run.c, the cases, the counter set); this file
 * parses, orders the steps, picks the spec, prints and writes DIR/bench.json and DIR/bench.csv
 * (docs/formats-bench.md). */
#define _GNU_SOURCE
#include "cli.h"
#include "vocab.h"
#include "cli_prof.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ffnroof/bench.h"
#include "ffnroof/bench_io.h"
#include "ffnroof/measure_papi.h"

#define CMD "bench"
#define MAX_BATCHES 32
#define MAX_CASES 128
#define MAX_EVENTS 16

static void usage(FILE *fp)
{
    fputs("usage: ffnroof bench (--model M | --shape T,d,f[,act]) [options]\n"
          "\n"
          "Run ffnroof's FFN kernels on this host (weights flushed from the caches before every\n"
          "call, unless --warm), with PAPI counters, beside the library peers, against the\n"
          "roofline and the simulator's prediction on a spec.\n"
          "\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_HW, FFN_O_MODEL, 0});
    fputs("  --shape T,d,f[,act]   one layer of T tokens (act default swiglu)\n"
          "  --experts E,k         with --shape: a MoE layer of E experts, top-k (softmax)\n",
          fp);
    ffn_cli_help_words(fp, CMD,
                       (const int[]){FFN_O_PHASE, FFN_O_BATCH, FFN_O_PROMPT, FFN_O_DTYPE,
                                     FFN_O_GROUP_SIZE, FFN_O_ZERO_POINT, FFN_O_ADTYPE, 0});
    fputs("  --isa I               auto, list, or the ISA level to cap dispatch at: ref,\n"
          "                        portable, avx2, avx512, avx512_bf16, amx, neon, sve\n"
          "                        (default: auto = FFNROOF_ISA, else the highest this CPU\n"
          "                        runs; list prints `ffnroof cpu` and exits)\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_THREADS, 0});
    fputs("  --peers LIST          openblas,onednn (default: none; dense layers only)\n"
          "  --events LIST         PAPI events to count (default: cycles, instructions, FP ops\n"
          "                        and cache misses where the host has them, plus\n"
          "                        sde:::ffnroof::{flops,weight_bytes,act_bytes,kernel_calls})\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_REPS, 0});
    fputs("  --verify              compare with the reference kernel (first 16 tokens)\n"
          "  --warm                leave the weights in the caches between calls (predicted as\n"
          "                        the model's --weights hot: each layer's weights read from the\n"
          "                        innermost level that holds them, in part from the largest\n"
          "                        when none does); the default is cold\n"
          "                        (flushed), and the JSON's \"weights\" says which\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_FORMAT, FFN_O_OUT_DIR, FFN_O_OUT, 0});
    fputs("  -h, --help            this help\n"
          "\n"
          "OpenBLAS with its AVX-512 kernels: unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for\n"
          "the command. Ctrl-C stops after the current call; the finished cases are written and\n"
          "marked incomplete. Exit codes: 0 ok, 1 failed or interrupted, 2 bad usage or input.\n",
          fp);
}

/* LeakSanitizer (FFNROOF_SANITIZE builds): PAPI 7.0 and libsde keep their event tables until
 * the process exits (strdup'd names inside libpapi.so / libsde.so); those allocations are
 * theirs, not ours (tests/test_measure_papi.c suppresses the same). Weak, so that a program
 * with its own suppressions keeps them. */
const char *__lsan_default_suppressions(void) __attribute__((weak));
const char *__lsan_default_suppressions(void)
{
    return "leak:libpapi.so\nleak:libsde.so\n";
}
const char *__lsan_default_options(void) __attribute__((weak));
const char *__lsan_default_options(void)
{
    return "print_suppressions=0";
}

/* "T,d,f[,act]" */
static int parse_shape(const char *s, uint64_t v[3], ffn_act *act)
{
    char buf[128];
    if (strlen(s) >= sizeof buf) return ffn_cli_usage(CMD, "--shape: too long");
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL, *tok = strtok_r(buf, ",", &save);
    static const char *const names[3] = {"T", "d", "f"};
    for (int i = 0; i < 3; i++) {
        if (!tok) return ffn_cli_usage(CMD, "--shape wants T,d,f[,act]; got '%s'", s);
        char opt[32];
        snprintf(opt, sizeof opt, "--shape %s", names[i]);
        int rc = ffn_cli_u64(CMD, opt, tok, 1, i == 0 ? (1u << 20) : (1u << 20), &v[i]);
        if (rc) return rc;
        tok = strtok_r(NULL, ",", &save);
    }
    *act = FFN_ACT_SWIGLU;
    if (tok) {
        if (ffn_act_parse(tok, act))
            return ffn_cli_usage(CMD,
                                 "--shape: unknown activation '%s' (relu, gelu, gelu_tanh, "
                                 "silu, swiglu, geglu, reglu)",
                                 tok);
        if (strtok_r(NULL, ",", &save)) return ffn_cli_usage(CMD, "--shape wants T,d,f[,act]");
    }
    return 0;
}

static void host_date(char *buf, size_t n, bool compact)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Several cases: how well the spec predicted them, in one line under the table. */
static void print_error_summary(FILE *fp, const ffn_bench_result *r, size_t n)
{
    double med, max;
    size_t worst;
    const size_t ne = ffn_bench_error_summary(r, n, &med, &max, &worst);
    if (ne > 1)
        fprintf(fp, "prediction |err| over %zu cases: median %.1f%%, worst %.1f%% (%s %s T=%zu)\n",
                ne, 100 * med, 100 * max, r[worst].c.kind == FFN_BENCH_MOE ? "moe" : "ffn",
                ffn_phase_name(r[worst].c.phase), r[worst].c.tokens);
}

/* No spec given and none remembered: calibrate this host quickly first (the pipeline of
 * `ffnroof calibrate --quick`), remember the spec in FFN_LAST_CAL_DIR and show its table on
 * stderr; stdout stays the bench's. 0 or an exit code. */
static int calibrate_first(void)
{
    static const char cal_cmd[] = "calibrate";
    fprintf(stderr,
            "ffnroof bench: no calibration at %s/hw.yaml: running `ffnroof calibrate "
            "--quick` first\n",
            FFN_LAST_CAL_DIR);
    ffn_isa isa;
    ffn_diag dg;
    ffn_diag_clear(&dg);
    if (ffn_isa_selected(&isa, &dg)) return ffn_cli_fail(FFN_EXIT_USAGE, cal_cmd, "%s", dg.msg);
    int rc = ffn_prof_mkdirs(cal_cmd, FFN_LAST_CAL_DIR);
    if (rc) return rc;
    double load[3] = {-1, -1, -1};
    ffn_prof_loadavg(load);
    ffn_prof_sigint_install();
    static ffn_cal_record r;
    const ffn_cal_opts co = {.mode = FFN_KCAL_QUICK, .stop = ffn_prof_stop_flag()};
    ffn_cal_step failed = FFN_CAL_STEP_DONE;
    rc = ffn_prof_cal_run(cal_cmd, "calibrate --quick", &co, load, &r, &failed);
    if (rc) return ffn_prof_cal_fail(cal_cmd, rc, failed);
    if ((rc = ffn_prof_cal_write(cal_cmd, FFN_LAST_CAL_DIR, &r, load, false))) return rc;
    ffn_prof_cal_table(stderr, &r, FFN_LAST_CAL_DIR);
    if (r.notes[0]) fprintf(stderr, "note: %s\n", r.notes);
    return r.complete ? FFN_EXIT_OK : FFN_EXIT_FAIL;
}

/* What the command line asks for. */
typedef struct bench_args {
    const char *hw_name, *model_name, *shape_s, *experts_s, *events_s, *out_dir;
    unsigned phases; /* bit 0 prefill, bit 1 decode; 0 = default */
    uint64_t batches[MAX_BATCHES];
    size_t n_batches;
    uint64_t seq, threads, reps, group;
    ffn_dtype wdt, adt;
    bool zero_point;
    ffn_format fmt;
    ffn_bench_opts bo;
    char out_buf[512];
} bench_args;

/* argv into *a: -1 to go on, else the exit code (help, --isa list, bad usage). */
static int parse_args(int argc, char **argv, bench_args *a)
{
    memset(a, 0, sizeof *a);
    a->batches[0] = 1;
    a->n_batches = 1;
    a->seq = FFN_DEFAULT_PROMPT;
    a->bo.seed = 1;
    a->wdt = a->adt = FFN_DT_FP32;
    a->fmt = FFN_FMT_TABLE;
    int c, rc;
    ffn_cli_seen seen = {0};
    ffn_cli_bind_str(&seen, FFN_O_HW, &a->hw_name);
    ffn_cli_bind_str(&seen, FFN_O_MODEL, &a->model_name);
    ffn_cli_bind_str(&seen, FFN_O_SHAPE, &a->shape_s);
    ffn_cli_bind_str(&seen, FFN_O_EXPERTS, &a->experts_s);
    ffn_cli_bind_phases(&seen, FFN_O_PHASE, &a->phases);
    ffn_cli_bind_word_list(&seen, CMD, FFN_O_BATCH, a->batches, MAX_BATCHES, &a->n_batches);
    ffn_cli_bind_word(&seen, FFN_O_SEQ, &a->seq);
    ffn_cli_bind_word(&seen, FFN_O_PROMPT, &a->seq);
    ffn_cli_bind_word(&seen, FFN_O_THREADS, &a->threads);
    ffn_cli_bind_str(&seen, FFN_O_EVENTS, &a->events_s);
    ffn_cli_bind_word(&seen, FFN_O_REPS, &a->reps);
    ffn_cli_bind_flag(&seen, FFN_O_VERIFY, &a->bo.verify);
    ffn_cli_bind_format(&seen, FFN_O_FORMAT, true, &a->fmt);
    ffn_cli_bind_str(&seen, FFN_O_OUT, &a->out_dir);
    ffn_cli_bind_str(&seen, FFN_O_OUT_DIR, &a->out_dir);
    ffn_cli_bind_flag(&seen, FFN_O_WARM, &a->bo.warm);
    ffn_cli_bind_flag(&seen, FFN_O_ZERO_POINT, &a->zero_point);
    static const int handled[] = {
        FFN_O_DTYPE, FFN_O_GROUP, FFN_O_GROUP_SIZE, FFN_O_ADTYPE, FFN_O_ISA, FFN_O_PEERS, 0};
    while ((c = ffn_cli_getopt(CMD, argc, argv, handled, &seen, NULL)) != -1) {
        if (c == -2) return FFN_EXIT_USAGE;
        switch (c) {
        case FFN_O_DTYPE:
            if (ffn_dtype_parse(optarg, &a->wdt) ||
                (a->wdt != FFN_DT_FP32 && a->wdt != FFN_DT_BF16 && a->wdt != FFN_DT_FP16 &&
                 a->wdt != FFN_DT_INT8 && a->wdt != FFN_DT_INT4))
                return ffn_cli_usage(
                    CMD, "--dtype must be fp32, bf16, fp16, int8 or int4; got '%s'", optarg);
            break;
        case FFN_O_GROUP:
        case FFN_O_GROUP_SIZE:
            if ((rc = ffn_cli_u64(CMD, c == FFN_O_GROUP ? "--group" : "--group-size", optarg, 1,
                                  1u << 20, &a->group)))
                return rc;
            if (a->group != 32 && a->group != 64 && a->group != 128)
                return ffn_cli_usage(CMD, "--group-size must be 32, 64 or 128; got %llu",
                                     (unsigned long long)a->group);
            break;
        case FFN_O_ADTYPE:
            if (ffn_dtype_parse(optarg, &a->adt) ||
                (a->adt != FFN_DT_FP32 && a->adt != FFN_DT_BF16 && a->adt != FFN_DT_INT8))
                return ffn_cli_usage(CMD, "--adtype must be fp32, bf16 or int8; got '%s'", optarg);
            break;
        case FFN_O_ISA:
            if (!strcmp(optarg, "auto")) {
                a->bo.isa_set = false;
            } else if (!strcmp(optarg, "list")) {
                return ffn_cli_cpu_report(FFN_FMT_TABLE);
            } else {
                ffn_isa isa;
                char usable[160];
                ffn_isa_usable_list(usable, sizeof usable);
                if (ffn_isa_parse(optarg, &isa))
                    return ffn_cli_usage(CMD, "--isa '%s' is not an ISA name; this CPU runs: %s",
                                         optarg, usable);
                if (!ffn_isa_available(isa)) {
                    char miss[160];
                    ffn_cpu_feature_list(ffn_isa_requires(isa) & ~ffn_cpu_features(), miss,
                                         sizeof miss);
                    return ffn_cli_fail(
                        FFN_EXIT_USAGE, CMD, "--isa %s: %s%s; this CPU runs: %s", optarg,
                        ffn_isa_built(isa) ? "this CPU lacks " : "not built into this binary",
                        ffn_isa_built(isa) ? miss : "", usable);
                }
                a->bo.isa_set = true;
                a->bo.isa = isa;
            }
            break;
        case FFN_O_PEERS: {
            char buf[128];
            snprintf(buf, sizeof buf, "%s", optarg);
            char *save = NULL;
            for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                int found = -1;
                for (int p = 0; p < FFN_PEER_COUNT; p++)
                    if (!strcmp(t, ffn_peer_lib_name((ffn_peer_lib)p))) found = p;
                if (found < 0)
                    return ffn_cli_usage(CMD, "--peers: unknown peer '%s' (openblas, onednn)", t);
                if (!ffn_peer_available((ffn_peer_lib)found))
                    return ffn_cli_fail(FFN_EXIT_USAGE, CMD,
                                        "--peers %s: not found when ffnroof "
                                        "was built",
                                        t);
                a->bo.peers[found] = true;
            }
            break;
        }
        default:
            return ffn_cli_opt_other(CMD, c, argv, usage, false);
        }
    }
    if (optind < argc) return ffn_cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
    if (!a->model_name == !a->shape_s)
        return ffn_cli_usage(CMD, "give exactly one of --model and --shape");
    if (a->shape_s && (ffn_cli_given(&seen, FFN_O_BATCH) || ffn_cli_given(&seen, FFN_O_SEQ) ||
                       ffn_cli_given(&seen, FFN_O_PROMPT)))
        return ffn_cli_usage(CMD, "--batch and --seq go with --model; --shape gives T itself");
    if (a->experts_s && !a->shape_s) return ffn_cli_usage(CMD, "--experts goes with --shape");
    a->bo.threads = (int)a->threads;
    a->bo.reps = a->reps;
    if (a->group && a->wdt != FFN_DT_INT4)
        return ffn_cli_usage(CMD, "--group goes with --dtype int4");
    if (a->zero_point && a->wdt != FFN_DT_INT4)
        return ffn_cli_usage(CMD, "--zero-point goes with --dtype int4");
    if (a->adt != FFN_DT_FP32 && a->wdt != FFN_DT_INT8 && a->wdt != FFN_DT_INT4)
        return ffn_cli_usage(CMD, "--adtype %s goes with --dtype int8 or int4",
                             ffn_dtype_name(a->adt));
    if (a->adt == FFN_DT_INT8 && a->wdt != FFN_DT_INT8)
        return ffn_cli_usage(CMD, "--adtype int8 (W8A8) goes with --dtype int8");
    if (a->wdt == FFN_DT_INT4 && !a->group) a->group = 128;
    return -1;
}

/* The cases of a run into cases[0..*n) (notes: what they leave out of the model), checked
 * against what this host can run. 0 or the exit code. */
static int make_cases(const bench_args *a, ffn_bench_case *cases, size_t *n, char *notes, size_t nn)
{
    int rc;
    if (a->shape_s) {
        uint64_t s3[3];
        ffn_act act;
        if ((rc = parse_shape(a->shape_s, s3, &act))) return rc;
        if (a->phases == 3) return ffn_cli_usage(CMD, "--phase both needs --model");
        uint64_t ek[2] = {0, 0};
        if (a->experts_s) {
            size_t ne = 0;
            if ((rc = ffn_cli_u64_list(CMD, "--experts", a->experts_s, 1, 4096, ek, 2, &ne)))
                return rc;
            if (ne != 2) return ffn_cli_usage(CMD, "--experts wants E,k");
            if (ek[1] > ek[0])
                return ffn_cli_usage(CMD, "--experts: k = %llu is larger than E = %llu",
                                     (unsigned long long)ek[1], (unsigned long long)ek[0]);
        }
        ffn_bench_case tmpl;
        memset(&tmpl, 0, sizeof tmpl);
        tmpl.shape.group = (unsigned)a->group;
        tmpl.shape.zero_point = a->zero_point;
        tmpl.wdtype = a->wdt;
        tmpl.adtype = a->adt;
        ffn_bench_shape_case(&tmpl, s3[0], s3[1], s3[2], act, a->phases, ek[0], ek[1],
                             &cases[(*n)++]);
    } else {
        static ffn_model m;
        if ((rc = ffn_cli_load_model(CMD, a->model_name, &m))) return rc;
        ffn_bench_case tmpl;
        memset(&tmpl, 0, sizeof tmpl);
        tmpl.shape.group = (unsigned)a->group;
        tmpl.shape.zero_point = a->zero_point;
        tmpl.wdtype = a->wdt;
        tmpl.adtype = a->adt;
        ffn_diag md;
        if (ffn_bench_model_cases(&m, &tmpl, a->phases ? a->phases : 3, a->batches, a->n_batches,
                                  a->seq, cases, MAX_CASES, n, notes, nn, &md))
            return ffn_cli_usage(CMD, "%s", md.msg);
    }
    ffn_diag d;
    ffn_diag_clear(&d);
    for (size_t i = 0; i < *n; i++)
        if ((rc = ffn_bench_case_check(&cases[i], &a->bo, &d)))
            return ffn_cli_fail(FFN_EXIT_USAGE, CMD, "%s", d.msg);
    return 0;
}

/* The counters a run reads and what the probe found. */
typedef struct bench_counters {
    ffn_papi_probe probe;
    const char *ev[MAX_EVENTS];
    size_t n_ev;
    char ev_buf[1024];
    ffn_counters *ctr; /* NULL: none (timers only) */
} bench_counters;

/* --events, or the default counter set where PAPI is built in (best effort: none when the host
 * counts nothing); a note on what cannot be counted goes into notes and stderr. 0 or the exit
 * code. */
static int open_counters(const bench_args *a, bench_counters *bc, char *notes, size_t nn)
{
    ffn_papi_probe_run(&bc->probe);
    bc->n_ev = 0;
    bc->ctr = NULL;
    ffn_diag d;
    ffn_diag_clear(&d);
    int rc;
    if (a->events_s) {
        if (!bc->probe.built_in)
            return ffn_cli_fail(FFN_EXIT_USAGE, CMD, "--events: ffnroof was built without PAPI");
        snprintf(bc->ev_buf, sizeof bc->ev_buf, "%s", a->events_s);
        char *save = NULL;
        for (char *t = strtok_r(bc->ev_buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (bc->n_ev >= MAX_EVENTS)
                return ffn_cli_usage(CMD, "--events: at most %d", MAX_EVENTS);
            bc->ev[bc->n_ev++] = t;
        }
        if (!bc->n_ev) return ffn_cli_usage(CMD, "--events: empty list");
        ffn_sde_init();
        if ((rc = ffn_counters_create(bc->ev, bc->n_ev, true, &bc->ctr, &d))) {
            /* one line: the diag names the event and lists what is available */
            char line[600];
            ffn_diag_format(&d, line, sizeof line);
            for (char *p = line; *p; p++)
                if (*p == '\n') *p = ' ';
            return ffn_cli_fail(FFN_EXIT_USAGE, CMD, "--events: %s", line);
        }
    } else if (bc->probe.built_in) {
        bc->n_ev = ffn_bench_default_events(bc->ev, MAX_EVENTS);
        ffn_sde_init();
        if (ffn_counters_create(bc->ev, bc->n_ev, false, &bc->ctr, &d)) {
            bc->ctr = NULL;
            bc->n_ev = 0;
        }
    }
    {
        char note[400];
        if (ffn_bench_counters_note(&bc->probe, a->events_s != NULL, note, sizeof note)) {
            size_t l = strlen(notes);
            snprintf(notes + l, nn - l, "%s%s", l ? "; " : "", note);
            fprintf(stderr, "ffnroof bench: note: %s\n", note);
        }
    }
    return 0;
}

/* The spec for the roofline and the prediction: --hw, else the last calibration (made first,
 * quickly, when there is none). Its file into spec_file (nsf bytes). 0 or the exit code. */
static int load_spec(const bench_args *a, ffn_hw *hw, char *spec_file, size_t nsf)
{
    int rc;
    ffn_diag d;
    ffn_diag_clear(&d);
    if (a->hw_name) {
        if ((rc = ffn_cli_resolve(CMD, "hw", a->hw_name, spec_file, nsf))) return rc;
        if ((rc = ffn_cli_load_hw(CMD, a->hw_name, hw))) return rc;
    } else {
        snprintf(spec_file, nsf, "%s/hw.yaml", FFN_LAST_CAL_DIR);
        if (access(spec_file, R_OK) != 0) {
            if (calibrate_first() != FFN_EXIT_OK)
                return ffn_cli_fail(FFN_EXIT_FAIL, CMD, "the calibration failed");
        }
        if (ffn_hw_load(spec_file, hw, &d)) return ffn_cli_diag(&d);
        char fw[320];
        if (ffn_hw_fit_warning(hw, fw, sizeof fw)) fprintf(stderr, "ffnroof %s: %s\n", CMD, fw);
    }
    return 0;
}

/* The results: DIR/bench.json and DIR/bench.csv (also what finished before an interruption or
 * a failure; brc: how the run ended), then stdout in the format asked for. 0 or the exit code. */
static int write_results(const bench_args *a, int argc, char **argv, const bench_counters *bc,
                         const ffn_hw *hw, const char *spec_file, const ffn_bench_result *res,
                         size_t done, int brc, const double load[3], const char *notes)
{
    char date[32], command[2048] = "ffnroof";
    host_date(date, sizeof date, false);
    for (int i = 0; i < argc; i++) {
        size_t l = strlen(command);
        snprintf(command + l, sizeof command - l, " %s", argv[i]);
    }
    ffn_host_info host;
    ffn_host_info_get(&host);
    ffn_bench_meta m = ffn_prof_bench_meta(date, command, brc, &host, load, hw, spec_file);
    m.probe = &bc->probe;
    m.sde_read = bc->probe.sde_works && bc->ctr;
    m.events = bc->ev;
    m.n_events = bc->n_ev;
    m.notes = notes;
    char path[1100];
    ffn_cli_out o;
    int rc;
    snprintf(path, sizeof path, "%s/bench.json", a->out_dir);
    if ((rc = ffn_cli_out_open(CMD, &o, path))) return rc;
    if ((rc = ffn_cli_out_close(CMD, &o, ffn_bench_write_json(o.fp, &m, res, done) == 0)))
        return rc;
    snprintf(path, sizeof path, "%s/bench.csv", a->out_dir);
    if ((rc = ffn_cli_out_open(CMD, &o, path))) return rc;
    if ((rc = ffn_cli_out_close(CMD, &o, ffn_bench_write_csv(o.fp, &m, res, done) == 0))) return rc;

    bool any_peer = false;
    for (int p = 0; p < FFN_PEER_COUNT; p++)
        any_peer = any_peer || a->bo.peers[p];
    if (a->fmt == FFN_FMT_JSON)
        return ffn_bench_write_json(stdout, &m, res, done) ? FFN_EXIT_FAIL : 0;
    if (a->fmt == FFN_FMT_CSV)
        return ffn_bench_write_csv(stdout, &m, res, done) ? FFN_EXIT_FAIL : 0;
    ffn_bench_write_table(stdout, hw, spec_file, res, done, any_peer);
    print_error_summary(stdout, res, done);
    if (notes[0]) printf("notes: %s\n", notes);
    printf("wrote %s/bench.json and %s/bench.csv\n", a->out_dir, a->out_dir);
    return 0;
}

int ffn_cmd_bench(int argc, char **argv)
{
    static bench_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    static ffn_bench_case cases[MAX_CASES];
    size_t n = 0;
    char notes[1024] = "";
    if ((rc = make_cases(&a, cases, &n, notes, sizeof notes))) return rc;
    /* the output folder, before anything runs */
    if (!a.out_dir) {
        char stamp[32];
        host_date(stamp, sizeof stamp, true);
        snprintf(a.out_buf, sizeof a.out_buf, "results/bench-%s-%ld", stamp, (long)getpid());
        a.out_dir = a.out_buf;
    }
    if ((rc = ffn_prof_mkdirs(CMD, a.out_dir))) return rc;
    static bench_counters bc;
    if ((rc = open_counters(&a, &bc, notes, sizeof notes))) return rc;
    a.bo.counters = bc.ctr;
    a.bo.event_names = bc.ev;
    a.bo.n_events = bc.n_ev;
    static ffn_hw hw;
    char spec_file[1024];
    if ((rc = load_spec(&a, &hw, spec_file, sizeof spec_file))) goto out;

    double load[3] = {-1, -1, -1};
    ffn_prof_loadavg(load);
    const ffn_prof_steal steal0 = ffn_prof_steal_now();
    static ffn_bench_result res[MAX_CASES];
    size_t done = 0;
    ffn_prof_progress prog;
    ffn_prof_progress_init(&prog, "bench");
    ffn_prof_sigint_install();
    a.bo.stop = ffn_prof_stop_flag();
    ffn_diag d;
    ffn_diag_clear(&d);
    const int brc =
        ffn_bench_run(&hw, cases, n, &a.bo, ffn_prof_progress_case, &prog, res, &done, &d);
    ffn_prof_progress_end(&prog);
    if (brc && brc != FFN_EINTERRUPTED) {
        char line[600];
        ffn_diag_format(&d, line, sizeof line);
        ffn_cli_fail(FFN_EXIT_FAIL, CMD, "%s", line);
    }
    const int threads_run = res[0].threads > 0 ? res[0].threads : 1;
    const ffn_prof_steal steal1 = ffn_prof_steal_now();
    ffn_prof_steal_note(&steal0, &steal1, threads_run, notes, sizeof notes);
    if (load[0] > (double)threads_run * 0.5) {
        size_t l = strlen(notes);
        snprintf(notes + l, sizeof notes - l,
                 "%sload average %.2f at the start: other work was running", l ? "; " : "",
                 load[0]);
    }
    rc = write_results(&a, argc, argv, &bc, &hw, spec_file, res, done, brc, load, notes);
    if (brc == FFN_EINTERRUPTED)
        fprintf(stderr,
                "ffnroof bench: interrupted: %zu of %zu cases written to %s (marked "
                "incomplete)\n",
                done, n, a.out_dir);
    if (!rc && brc) rc = FFN_EXIT_FAIL;
out:
    ffn_counters_free(bc.ctr);
    bc.ctr = NULL;
    return rc;
}
