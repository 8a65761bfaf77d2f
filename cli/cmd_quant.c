/* `ffnroof quant`: what each quantized format costs in accuracy on one FFN layer and what it
 * buys in decode speed on this host (include/ffnroof/quant_eval.h, docs/quantization.md). The
 * layer is synthetic (--d/--f/--act, or --model's shape) or one layer of a safetensors
 * checkpoint (--checkpoint, --layer); the activations are always synthetic, with outlier
 * channels. */
#define _GNU_SOURCE
#include "cli.h"
#include "vocab.h"
#include "cli_prof.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/measure.h"
#include "ffnroof/quant_eval.h"
#include "ffnroof/quant_io.h"
#include "ffnroof/safetensors.h"

#define CMD "quant"

/* Defaults: LLaMA-2-7B's FFN shape; 6 outlier channels of 4096 at 20x, the count and the
 * magnitude LLM.int8() reports at the 6.7B scale (Dettmers et al. 2022, sections 1 and 4). */
#define DEF_D 4096
#define DEF_F 11008
#define DEF_TOKENS 32
#define DEF_OUTLIERS (6.0 / 4096.0)
#define DEF_OUTLIER_SCALE 20.0
#define DEF_NU 4.0
#define DEF_ALPHA 0.5
#define DEF_REPS 20
#define DEF_FORMATS "int8-tensor,int8-channel,int4,w8a8,w8a8-smooth"
#define DEF_FORMATS_NO_INT4 "int8-tensor,int8-channel,w8a8,w8a8-smooth"

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: ffnroof quant [options]\n"
            "\n"
            "The accuracy cost of quantized formats on one FFN layer, against the fp32 layer\n"
            "computed in double, beside each format's measured decode speed-up on this host.\n"
            "\n"
            "The layer (default: d %d, f %d, swiglu, LLaMA-2-7B's shape):\n"
            "  --d N, --f N          model and intermediate size\n"
            "  --act A               relu, gelu, gelu_tanh, silu, swiglu, geglu, reglu\n",
            DEF_D, DEF_F);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_MODEL, 0});
    fprintf(fp,
            "  --checkpoint FILE     real weights: layer --layer of a safetensors file, or of\n"
            "                        a sharded checkpoint through its *.safetensors.index.json\n"
            "                        (model.layers.N.mlp.{gate,up,down}_proj.weight; F32, F16 or\n"
            "                        BF16); d and f come from the tensors, the activation from\n"
            "                        --act or --model (default swiglu)\n"
            "  --layer N             the checkpoint's layer (default 0)\n"
            "Synthetic inputs (seeded; the activations are synthetic with a checkpoint too):\n"
            "  --tokens T            rows of x (default %d)\n"
            "  --outliers FRAC       fraction of x's channels that are outliers, the same ones\n"
            "                        in every token (default %.6f: 6 of 4096, as LLM.int8()\n"
            "                        reports at 6.7B parameters); 0 for none\n"
            "  --outlier-scale S     their factor over the N(0, 1) of the others (default %g;\n"
            "                        LLM.int8() reports up to 20x, SmoothQuant about 100x)\n"
            "  --dist W              gauss or student-t (heavy tails), sd 1/sqrt(K) (default\n"
            "                        gauss)\n",
            DEF_TOKENS, DEF_OUTLIERS, DEF_OUTLIER_SCALE);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_WEIGHTS, 0});
    fprintf(fp, "  --nu V                Student-t degrees of freedom (default %g)\n", DEF_NU);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_SEED, 0});
    fprintf(fp,
            "Formats:\n"
            "  --formats LIST        of int8-tensor, int8-channel, int4 (every --group),\n"
            "                        int4-g32|g64|g128, int4z-gG (with zero points), w8a8,\n"
            "                        w8a8-smooth (default %s)\n",
            DEF_FORMATS);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_GROUP_SIZE, 0});
    fprintf(fp, "  --alpha A             SmoothQuant migration strength in [0, 1] (default %g)\n",
            DEF_ALPHA);
    fputs("Speed (decode, T = 1, the best of --reps calls of the kernel dispatch picks):\n"
          "  --no-speed            leave the speed column out\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_REPS, FFN_O_THREADS, 0});
    fputs("Output:\n", fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_FORMAT, FFN_O_OUT, 0});
    fputs("  -h, --help            this help\n"
          "\n"
          "Errors are relative L2 ||y - y_ref|| / ||y_ref||, max |y - y_ref| and the cosine\n"
          "similarity over the whole output [T][d]; docs/quantization.md explains them.\n"
          "Exit codes: 0 ok, 1 failed, 2 bad usage or bad input.\n",
          fp);
}

/* "32,64" -> mask of group bits (32 -> 1, 64 -> 2, 128 -> 4). */
static int parse_groups(int opt, const char *s, unsigned *mask)
{
    uint64_t g[3];
    size_t n = 0;
    int rc = ffn_cli_word_list(CMD, opt, s, g, 3, &n);
    if (rc) return rc;
    *mask = 0;
    for (size_t i = 0; i < n; i++) {
        if (g[i] != 32 && g[i] != 64 && g[i] != 128)
            return ffn_cli_usage(CMD, "--%s: %llu is not an int4 group size (32, 64 or 128)",
                                 ffn_cli_opt_name(opt), (unsigned long long)g[i]);
        *mask |= (unsigned)(g[i] / 32 == 4 ? 4 : g[i] / 32);
    }
    return 0;
}

static void groups_text(unsigned mask, char *buf, size_t n)
{
    buf[0] = '\0';
    for (unsigned i = 0; i < 3; i++)
        if (mask & 1u << i) {
            const size_t l = strlen(buf);
            snprintf(buf + l, n - l, "%s%u", l ? ", " : "", 32u << i);
        }
    if (!buf[0]) snprintf(buf, n, "none (d and f are not both multiples of 32)");
}

/* --formats into fmts (at most FFN_QEVAL_MAX_ROWS), 'int4' expanded over the group mask. */
static int parse_formats(const char *s, unsigned groups, ffn_qeval_fmt *fmts, size_t *n)
{
    char buf[512];
    if (strlen(s) >= sizeof buf) return ffn_cli_usage(CMD, "--formats: too long");
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        ffn_qeval_fmt one[3];
        size_t k = 0;
        if (!strcmp(t, "int4") || !strcmp(t, "int4z")) {
            for (unsigned i = 0; i < 3; i++)
                if (groups & 1u << i)
                    one[k++] = (ffn_qeval_fmt){
                        .kind = FFN_QE_INT4_GROUP, .group = 32u << i, .zero_point = t[4] == 'z'};
        } else if (ffn_qeval_fmt_parse(t, &one[0]) == 0) {
            k = 1;
        } else {
            return ffn_cli_usage(CMD,
                                 "--formats: unknown format '%s' (int8-tensor, int8-channel, "
                                 "int4, int4-g32, int4-g64, int4-g128, int4z, int4z-gG, w8a8, "
                                 "w8a8-smooth)",
                                 t);
        }
        for (size_t i = 0; i < k; i++) {
            for (size_t j = 0; j < *n; j++)
                if (fmts[j].kind == one[i].kind && fmts[j].group == one[i].group &&
                    fmts[j].zero_point == one[i].zero_point)
                    return ffn_cli_usage(CMD, "--formats: '%s' given twice", t);
            if (*n == FFN_QEVAL_MAX_ROWS)
                return ffn_cli_usage(CMD, "--formats: more than %d formats", FFN_QEVAL_MAX_ROWS);
            fmts[(*n)++] = one[i];
        }
    }
    if (!*n) return ffn_cli_usage(CMD, "--formats: no format given");
    return 0;
}

typedef struct opts {
    uint64_t d, f, layer, tokens, seed, reps, threads;
    bool have_d, have_f, have_act, have_layer, have_weights, have_nu, have_group, have_formats;
    bool no_speed;
    ffn_act act;
    const char *model, *ckpt, *formats, *out;
    double outliers, oscale, nu, alpha;
    ffn_qeval_wdist wdist;
    unsigned groups;
    ffn_format fmt;
} opts;

static int parse(int argc, char **argv, opts *o)
{
    int c, rc;
    ffn_cli_seen seen = {0};
    ffn_cli_bind_u64(&seen, FFN_O_D, 1, 1u << 20, &o->d);
    ffn_cli_bind_u64(&seen, FFN_O_F, 1, 1u << 20, &o->f);
    ffn_cli_bind_str(&seen, FFN_O_MODEL, &o->model);
    ffn_cli_bind_str(&seen, FFN_O_CHECKPOINT, &o->ckpt);
    ffn_cli_bind_u64(&seen, FFN_O_LAYER, 0, 1u << 20, &o->layer);
    ffn_cli_bind_u64(&seen, FFN_O_TOKENS, 1, 65536, &o->tokens);
    ffn_cli_bind_double(&seen, FFN_O_OUTLIERS, 0, 1, &o->outliers);
    ffn_cli_bind_double(&seen, FFN_O_OUTLIER_SCALE, 1, 1e6, &o->oscale);
    ffn_cli_bind_double(&seen, FFN_O_NU, 1e-3, 1e6, &o->nu);
    ffn_cli_bind_double(&seen, FFN_O_ALPHA, 0, 1, &o->alpha);
    ffn_cli_bind_word(&seen, FFN_O_SEED, &o->seed);
    ffn_cli_bind_str(&seen, FFN_O_FORMATS, &o->formats);
    ffn_cli_bind_flag(&seen, FFN_O_NO_SPEED, &o->no_speed);
    ffn_cli_bind_word(&seen, FFN_O_REPS, &o->reps);
    ffn_cli_bind_word(&seen, FFN_O_THREADS, &o->threads);
    ffn_cli_bind_format(&seen, FFN_O_FORMAT, true, &o->fmt);
    ffn_cli_bind_str(&seen, FFN_O_OUT, &o->out);
    static const int handled[] = {FFN_O_ACT,   FFN_O_WEIGHTS,    FFN_O_DIST,
                                  FFN_O_GROUP, FFN_O_GROUP_SIZE, 0};
    while ((c = ffn_cli_getopt(CMD, argc, argv, handled, &seen, NULL)) != -1) {
        if (c == -2) return FFN_EXIT_USAGE;
        switch (c) {
        case FFN_O_ACT:
            if (ffn_act_parse(optarg, &o->act))
                return ffn_cli_usage(CMD,
                                     "--act: unknown activation '%s' (relu, gelu, "
                                     "gelu_tanh, silu, swiglu, geglu, reglu)",
                                     optarg);
            break;
        case FFN_O_WEIGHTS:
            fprintf(stderr, "ffnroof quant: note: --weights is now --dist (the synthetic weights' "
                            "distribution); --weights is where the weights live in predict, "
                            "plan and sweep\n");
            /* fall through */
        case FFN_O_DIST:
            if (!strcmp(optarg, "gauss") || !strcmp(optarg, "gaussian"))
                o->wdist = FFN_QW_GAUSS;
            else if (!strcmp(optarg, "student-t") || !strcmp(optarg, "t"))
                o->wdist = FFN_QW_STUDENT_T;
            else
                return ffn_cli_usage(CMD, "--%s: '%s' is not gauss or student-t",
                                     ffn_cli_opt_name(c), optarg);
            break;
        case FFN_O_GROUP:
        case FFN_O_GROUP_SIZE:
            if ((rc = parse_groups(c, optarg, &o->groups))) return rc;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            return ffn_cli_opt_other(CMD, c, argv, usage, true);
        }
    }
    o->have_d = ffn_cli_given(&seen, FFN_O_D);
    o->have_f = ffn_cli_given(&seen, FFN_O_F);
    o->have_act = ffn_cli_given(&seen, FFN_O_ACT);
    o->have_layer = ffn_cli_given(&seen, FFN_O_LAYER);
    o->have_weights = ffn_cli_given(&seen, FFN_O_WEIGHTS) || ffn_cli_given(&seen, FFN_O_DIST);
    o->have_nu = ffn_cli_given(&seen, FFN_O_NU);
    o->have_group = ffn_cli_given(&seen, FFN_O_GROUP) || ffn_cli_given(&seen, FFN_O_GROUP_SIZE);
    o->have_formats = ffn_cli_given(&seen, FFN_O_FORMATS);
    if (optind < argc) return ffn_cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
    if (o->ckpt && (o->have_d || o->have_f))
        return ffn_cli_usage(CMD, "--d and --f come from the checkpoint's tensors; leave them "
                                  "out with --checkpoint");
    if (o->model && (o->have_d || o->have_f || o->have_act))
        return ffn_cli_usage(CMD, "--model gives d, f and the activation; not with --d, --f or "
                                  "--act");
    if (o->have_layer && !o->ckpt) return ffn_cli_usage(CMD, "--layer needs --checkpoint");
    if (o->ckpt && (o->have_weights || o->have_nu))
        return ffn_cli_usage(CMD, "--dist and --nu shape synthetic weights; the checkpoint "
                                  "has its own");
    if (o->have_nu && o->wdist != FFN_QW_STUDENT_T)
        return ffn_cli_usage(CMD, "--nu needs --dist student-t");
    if (o->no_speed && (o->reps || o->threads))
        return ffn_cli_usage(CMD, "--reps and --threads time the kernels; not with --no-speed");
    return 0;
}

/* The shape from the flags, --model, or the checkpoint (read into *ffn). */
static int load_layer(opts *o, ffn_kshape *s, ffn_st_ffn *ffn, ffn_qeval_report *r)
{
    if (o->model) {
        static ffn_model m;
        int rc = ffn_cli_load_model(CMD, o->model, &m);
        if (rc) return rc;
        const uint64_t f = m.intermediate ? m.intermediate : m.moe.expert_intermediate;
        if (!o->ckpt) {
            if (m.hidden > (1u << 20) || f == 0 || f > (1u << 20))
                return ffn_cli_usage(CMD,
                                     "%s: an FFN of d %llu, f %llu is beyond what quant "
                                     "evaluates (1 to 2^20 each)",
                                     o->model, (unsigned long long)m.hidden, (unsigned long long)f);
            o->d = m.hidden;
            o->f = f;
        }
        o->act = m.act;
        o->have_act = true;
    }
    s->act = o->have_act ? o->act : FFN_ACT_SWIGLU;
    if (!o->ckpt) {
        s->d = (size_t)o->d;
        s->f = (size_t)o->f;
        snprintf(r->source, sizeof r->source, "synthetic");
        return 0;
    }
    if (!ffn_act_gated(s->act))
        return ffn_cli_usage(CMD,
                             "--checkpoint reads a gated MLP (gate_proj, up_proj, "
                             "down_proj): the activation must be swiglu, geglu or reglu, "
                             "not %s",
                             ffn_act_name(s->act));
    ffn_diag d;
    ffn_diag_clear(&d);
    const size_t len = strlen(o->ckpt);
    int rc;
    if (len > 5 && !strcmp(o->ckpt + len - 5, ".json")) {
        /* a sharded checkpoint's model.safetensors.index.json */
        rc = ffn_st_read_ffn_index(o->ckpt, (unsigned)o->layer, ffn, &d);
    } else {
        ffn_st_file st;
        if (ffn_st_open(&st, o->ckpt, &d)) return ffn_cli_diag(&d);
        rc = ffn_st_read_ffn(&st, (unsigned)o->layer, ffn, &d);
        ffn_st_close(&st);
    }
    if (rc)
        return rc == FFN_ENOMEM ? ffn_cli_fail(FFN_EXIT_FAIL, CMD, "%s", d.msg) : ffn_cli_diag(&d);
    if (ffn->d > (1u << 20) || ffn->f > (1u << 20))
        return ffn_cli_fail(FFN_EXIT_USAGE, CMD,
                            "%s: layer %llu is d %zu, f %zu, beyond what quant evaluates (1 to "
                            "2^20 each)",
                            o->ckpt, (unsigned long long)o->layer, ffn->d, ffn->f);
    s->d = ffn->d;
    s->f = ffn->f;
    r->checkpoint = true;
    snprintf(r->source, sizeof r->source, "%s, %s{gate,up,down}_proj.weight", o->ckpt, ffn->prefix);
    snprintf(r->weight_dtype, sizeof r->weight_dtype, "%s", ffn_st_dtype_name(ffn->dtype));
    return 0;
}

int ffn_cmd_quant(int argc, char **argv)
{
    opts o = {.tokens = DEF_TOKENS,
              .d = DEF_D,
              .f = DEF_F,
              .seed = 1,
              .outliers = DEF_OUTLIERS,
              .oscale = DEF_OUTLIER_SCALE,
              .nu = DEF_NU,
              .alpha = DEF_ALPHA,
              .groups = 7,
              .formats = DEF_FORMATS};
    int rc = parse(argc, argv, &o);
    if (rc) return rc < 0 ? FFN_EXIT_OK : rc;

    static ffn_qeval_report r;
    memset(&r, 0, sizeof r);
    ffn_kshape s = {0};
    ffn_st_ffn ffn = {0};
    float *wbuf = NULL, *x = NULL;
    double *y_ref = NULL;
    if ((rc = load_layer(&o, &s, &ffn, &r))) goto out;
    /* 'int4' without --group: the default sizes that fit this layer; none fitting leaves int4
     * out of the default list and is an error for a list the user gave */
    unsigned groups = o.groups;
    const char *formats = o.formats;
    if (!o.have_group) {
        groups &= ffn_qeval_groups_valid(s.d, s.f);
        if (!groups && !o.have_formats) {
            fprintf(stderr,
                    "ffnroof %s: int4 left out: no group of 32, 64 or 128 divides both d %zu "
                    "and f %zu\n",
                    CMD, s.d, s.f);
            formats = DEF_FORMATS_NO_INT4;
        }
        if (!groups) groups = o.groups; /* then the check below says why */
    }
    ffn_qeval_fmt fmts[FFN_QEVAL_MAX_ROWS];
    size_t nf = 0;
    if ((rc = parse_formats(formats, groups, fmts, &nf))) goto out;
    /* every int4 group must divide K of both GEMMs */
    for (size_t i = 0; i < nf; i++)
        if (fmts[i].kind == FFN_QE_INT4_GROUP && ffn_qeval_fmt_check(&fmts[i], &s)) {
            char valid[96];
            groups_text(ffn_qeval_groups_valid(s.d, s.f), valid, sizeof valid);
            rc = ffn_cli_usage(CMD,
                               "int4 groups of %u do not divide K of this layer (d %zu for gate "
                               "and up, f %zu for down); valid group sizes: %s",
                               fmts[i].group, s.d, s.f, valid);
            goto out;
        }
    if (s.d * s.f > ((size_t)1 << 31))
        fprintf(stderr,
                "ffnroof %s: warning: a layer of %zu MiB of fp32 weights: this takes a "
                "while and a few times that in memory\n",
                CMD, 3 * s.d * s.f * sizeof(float) >> 20);
    const bool gated = ffn_act_gated(s.act);
    const size_t df = s.d * s.f, T = (size_t)o.tokens;
    ffn_kweights w = {0};
    if (r.checkpoint) {
        w = (ffn_kweights){.w_gate = ffn.w_gate, .w_up = ffn.w_up, .w_down = ffn.w_down};
    } else {
        wbuf = malloc((gated ? 3 : 2) * df * sizeof *wbuf);
        if (!wbuf) {
            rc = ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory for the weights");
            goto out;
        }
        w = (ffn_kweights){
            .w_gate = wbuf, .w_down = wbuf + df, .w_up = gated ? wbuf + 2 * df : NULL};
    }
    r.shape = s;
    r.tokens = T;
    r.alpha = o.alpha;
    r.synth = (ffn_qeval_synth){.seed = o.seed,
                                .outlier_frac = o.outliers,
                                .outlier_scale = o.oscale,
                                .wdist = o.wdist,
                                .nu = o.nu};
    if (!r.checkpoint &&
        ffn_qeval_synth_weights(&r.synth, &s, wbuf, gated ? wbuf + 2 * df : NULL, wbuf + df)) {
        rc = ffn_cli_fail(FFN_EXIT_FAIL, CMD, "cannot make the synthetic weights");
        goto out;
    }
    x = malloc(T * s.d * sizeof *x);
    y_ref = malloc(T * s.d * sizeof *y_ref);
    if (!x || !y_ref) {
        rc = ffn_cli_fail(FFN_EXIT_FAIL, CMD, "out of memory");
        goto out;
    }
    if (ffn_qeval_synth_acts(&r.synth, T, s.d, x, &r.outlier_channels, NULL)) {
        rc = ffn_cli_fail(FFN_EXIT_FAIL, CMD, "cannot make the activations");
        goto out;
    }
    const int threads = (int)o.threads;
    int erc = ffn_qeval_reference(&s, &w, T, x, threads, y_ref);
    if (erc == FFN_EINVAL && r.checkpoint) {
        rc = ffn_cli_fail(FFN_EXIT_USAGE, CMD,
                          "%s: layer %llu's weights hold a NaN or an "
                          "infinity (tensors %s*)",
                          o.ckpt, (unsigned long long)o.layer, ffn.prefix);
        goto out;
    }
    if (erc) {
        rc = ffn_cli_fail(FFN_EXIT_FAIL, CMD, "the reference FFN failed: %s", ffn_strerror(erc));
        goto out;
    }
    for (size_t i = 0; i < nf; i++) {
        ffn_qeval_row *row = &r.rows[r.n_rows++];
        row->fmt = fmts[i];
        ffn_qeval_fmt_name(&fmts[i], row->name, sizeof row->name);
        row->bits_per_weight = ffn_qeval_fmt_bits(&fmts[i], &s);
        row->speed.check_rel_l2 = NAN;
        if ((erc = ffn_qeval_run(&s, &w, T, x, y_ref, &fmts[i], o.alpha, threads, &row->m, NULL))) {
            rc = ffn_cli_fail(FFN_EXIT_FAIL, CMD, "%s: the evaluation failed: %s", row->name,
                              erc == FFN_EINVAL ? "a value out of fp32's range on the way"
                                                : ffn_strerror(erc));
            goto out;
        }
    }
    r.speed = !o.no_speed;
    r.load_avg[0] = r.load_avg[1] = r.load_avg[2] = -1;
    if (r.speed) {
        r.speed_opts =
            (ffn_qspeed_opts){.threads = threads, .reps = o.reps ? (unsigned)o.reps : DEF_REPS};
        ffn_prof_loadavg(r.load_avg);
        ffn_host_info host;
        if (ffn_host_info_get(&host) == 0)
            snprintf(r.host_cpu, sizeof r.host_cpu, "%s", host.cpu_model);
        ffn_diag sd;
        ffn_diag_clear(&sd);
        ffn_isa isa;
        if (ffn_isa_selected(&isa, &sd)) { /* FFNROOF_ISA names a level this CPU lacks */
            rc = ffn_cli_diag(&sd);
            goto out;
        }
        if (ffn_qspeed_report(&s, &w, T, x, y_ref, o.alpha, &r, &sd)) {
            rc = ffn_cli_fail(FFN_EXIT_FAIL, CMD, "%s", sd.msg);
            goto out;
        }
        const int cpus = threads > 0 ? threads : 1;
        if (r.load_avg[0] > 0.5 * cpus + 0.5)
            fprintf(stderr,
                    "ffnroof %s: warning: load average %.2f at the start: other work was "
                    "running and the speed column is noisy\n",
                    CMD, r.load_avg[0]);
    }
    ffn_cli_out out;
    if ((rc = ffn_cli_out_open(CMD, &out, o.out))) goto out;
    const int wrc = o.fmt == FFN_FMT_JSON  ? ffn_quant_write_json(out.fp, &r)
                    : o.fmt == FFN_FMT_CSV ? ffn_quant_write_csv(out.fp, &r)
                                           : ffn_quant_write_table(out.fp, &r);
    rc = ffn_cli_out_close(CMD, &out, wrc == 0);
out:
    ffn_st_ffn_free(&ffn);
    free(wbuf);
    free(x);
    free(y_ref);
    return rc;
}
