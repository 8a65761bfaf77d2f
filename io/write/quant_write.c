/* Writers of `ffnroof quant` (include/ffnroof/quant_io.h): one report, three shapes. The table
 * says where the inputs came from and how the speed was measured above the rows, so that a
 * pasted table carries its own conditions. */
#include "ffnroof/quant_io.h"

#include <math.h>
#include <string.h>

#include "ffnroof/json.h"

static const char *wdist_name(const ffn_qeval_synth *s)
{
    return s->wdist == FFN_QW_STUDENT_T ? "student-t" : "gauss";
}

static int finish(FILE *fp)
{
    return fflush(fp) || ferror(fp) ? FFN_EIO : 0;
}

/* "1.23 ms" / "456 us" */
static void time_text(double s, char *buf, size_t n)
{
    if (!(s >= 0) || !isfinite(s))
        snprintf(buf, n, "-");
    else if (s >= 1)
        snprintf(buf, n, "%.3g s", s);
    else if (s >= 1e-3)
        snprintf(buf, n, "%.3g ms", s * 1e3);
    else
        snprintf(buf, n, "%.3g us", s * 1e6);
}

int ffn_quant_write_table(FILE *fp, const ffn_qeval_report *r)
{
    if (!fp || !r) return FFN_EINVAL;
    const ffn_kshape *s = &r->shape;
    fprintf(fp, "FFN layer d %zu, f %zu, %s; %zu tokens\n", s->d, s->f, ffn_act_name(s->act),
            r->tokens);
    if (r->checkpoint)
        fprintf(fp, "weights: %s (%s)\n", r->source, r->weight_dtype);
    else if (r->synth.wdist == FFN_QW_STUDENT_T)
        fprintf(fp, "weights: synthetic, Student-t (nu %g), sd 1/sqrt(K), seed %llu\n", r->synth.nu,
                (unsigned long long)r->synth.seed);
    else
        fprintf(fp, "weights: synthetic, Gaussian, sd 1/sqrt(K), seed %llu\n",
                (unsigned long long)r->synth.seed);
    if (r->outlier_channels)
        fprintf(fp, "activations: Gaussian, %zu of %zu channels (%.3g%%) scaled %gx, seed %llu\n",
                r->outlier_channels, s->d, 100.0 * (double)r->outlier_channels / (double)s->d,
                r->synth.outlier_scale, (unsigned long long)r->synth.seed);
    else
        fprintf(fp, "activations: Gaussian, no outlier channels, seed %llu\n",
                (unsigned long long)r->synth.seed);
    fprintf(fp, "SmoothQuant alpha %g\n", r->alpha);
    if (r->speed) {
        char t[32];
        time_text(r->fp32_time_s, t, sizeof t);
        fprintf(fp, "speed: decode (T = 1), best of %u, ", r->speed_opts.reps);
        if (r->speed_opts.threads > 0)
            fprintf(fp, "%d thread%s", r->speed_opts.threads, r->speed_opts.threads > 1 ? "s" : "");
        else
            fprintf(fp, "all CPUs");
        fprintf(fp, ", vs %s (%s)", r->fp32_kernel, t);
        if (r->host_cpu[0]) fprintf(fp, " on %s", r->host_cpu);
        if (r->load_avg[0] >= 0) fprintf(fp, ", load %.2f", r->load_avg[0]);
        fputc('\n', fp);
    }
    fprintf(fp, "\n%-13s %6s %9s %10s %10s  %s\n", "format", "bits/w", "rel L2", "max |err|",
            "cosine", r->speed ? "decode speed-up (kernel)" : "");
    for (size_t i = 0; i < r->n_rows; i++) {
        const ffn_qeval_row *w = &r->rows[i];
        fprintf(fp, "%-13s %6.2f %8.3g%% %10.3g %10.6f", w->name, w->bits_per_weight,
                100 * w->m.rel_l2, w->m.max_abs, w->m.cosine);
        if (!r->speed)
            fputc('\n', fp);
        else if (!w->speed.ran)
            fprintf(fp, "  no kernel\n");
        else
            fprintf(fp, "  %.2fx (%s)\n", w->speed.speedup, w->speed.kernel);
    }
    return finish(fp);
}

int ffn_quant_write_json(FILE *fp, const ffn_qeval_report *r)
{
    if (!fp || !r) return FFN_EINVAL;
    ffn_json j;
    ffn_json_init(&j, fp, true);
    ffn_json_obj_begin(&j, NULL);
    ffn_json_str(&j, "schema", FFN_QUANT_SCHEMA);
    ffn_json_obj_begin(&j, "layer");
    ffn_json_u64(&j, "d", r->shape.d);
    ffn_json_u64(&j, "f", r->shape.f);
    ffn_json_str(&j, "act", ffn_act_name(r->shape.act));
    ffn_json_bool(&j, "gated", ffn_act_gated(r->shape.act));
    ffn_json_obj_end(&j);
    ffn_json_u64(&j, "tokens", r->tokens);
    ffn_json_obj_begin(&j, "weights");
    ffn_json_str(&j, "source", r->checkpoint ? "checkpoint" : "synthetic");
    if (r->checkpoint) {
        ffn_json_str(&j, "checkpoint", r->source);
        ffn_json_str(&j, "dtype", r->weight_dtype);
    } else {
        ffn_json_str(&j, "distribution", wdist_name(&r->synth));
        if (r->synth.wdist == FFN_QW_STUDENT_T) ffn_json_num(&j, "nu", r->synth.nu);
    }
    ffn_json_obj_end(&j);
    ffn_json_obj_begin(&j, "activations");
    ffn_json_str(&j, "distribution", "gauss");
    ffn_json_num(&j, "outlier_fraction", r->synth.outlier_frac);
    ffn_json_u64(&j, "outlier_channels", r->outlier_channels);
    ffn_json_num(&j, "outlier_scale", r->synth.outlier_scale);
    ffn_json_obj_end(&j);
    ffn_json_u64(&j, "seed", r->synth.seed);
    ffn_json_num(&j, "alpha", r->alpha);
    ffn_json_obj_begin(&j, "speed");
    ffn_json_bool(&j, "measured", r->speed);
    if (r->speed) {
        ffn_json_str(&j, "phase", "decode");
        ffn_json_u64(&j, "tokens", 1);
        ffn_json_u64(&j, "reps", r->speed_opts.reps);
        if (r->speed_opts.threads > 0)
            ffn_json_u64(&j, "threads", (uint64_t)r->speed_opts.threads);
        else
            ffn_json_null(&j, "threads");
        ffn_json_str(&j, "fp32_kernel", r->fp32_kernel);
        ffn_json_num_or_null(&j, "fp32_time_s", r->fp32_time_s);
        ffn_json_num_or_null(&j, "fp32_kernel_rel_l2", r->fp32_check_rel_l2);
        ffn_json_str(&j, "host_cpu", r->host_cpu);
        ffn_json_num_or_null(&j, "load_avg", r->load_avg[0] >= 0 ? r->load_avg[0] : NAN);
    }
    ffn_json_obj_end(&j);
    ffn_json_arr_begin(&j, "formats");
    for (size_t i = 0; i < r->n_rows; i++) {
        const ffn_qeval_row *w = &r->rows[i];
        ffn_json_obj_begin(&j, NULL);
        ffn_json_str(&j, "format", w->name);
        ffn_json_num(&j, "bits_per_weight", w->bits_per_weight);
        ffn_json_num_or_null(&j, "rel_l2", w->m.rel_l2);
        ffn_json_num_or_null(&j, "max_abs", w->m.max_abs);
        ffn_json_num_or_null(&j, "cosine", w->m.cosine);
        if (r->speed && w->speed.ran) {
            ffn_json_str(&j, "kernel", w->speed.kernel);
            ffn_json_num_or_null(&j, "time_s", w->speed.time_s);
            ffn_json_num_or_null(&j, "speedup", w->speed.speedup);
            ffn_json_num_or_null(&j, "kernel_rel_l2", w->speed.check_rel_l2);
        } else {
            ffn_json_null(&j, "kernel");
            ffn_json_null(&j, "time_s");
            ffn_json_null(&j, "speedup");
            ffn_json_null(&j, "kernel_rel_l2");
        }
        ffn_json_obj_end(&j);
    }
    ffn_json_arr_end(&j);
    ffn_json_obj_end(&j);
    return ffn_json_finish(&j) ? FFN_EIO : finish(fp);
}

int ffn_quant_write_csv(FILE *fp, const ffn_qeval_report *r)
{
    if (!fp || !r) return FFN_EINVAL;
    fputs("d,f,act,tokens,weights,outlier_fraction,outlier_channels,outlier_scale,alpha,seed,"
          "format,bits_per_weight,rel_l2,max_abs,cosine,kernel,time_s,speedup,kernel_rel_l2\n",
          fp);
    for (size_t i = 0; i < r->n_rows; i++) {
        const ffn_qeval_row *w = &r->rows[i];
        const bool ran = r->speed && w->speed.ran;
        fprintf(fp, "%zu,%zu,%s,%zu,%s", r->shape.d, r->shape.f, ffn_act_name(r->shape.act),
                r->tokens, r->checkpoint ? "checkpoint" : wdist_name(&r->synth));
        ffn_csv_num(fp, r->synth.outlier_frac, 9);
        fprintf(fp, ",%zu", r->outlier_channels);
        ffn_csv_num(fp, r->synth.outlier_scale, 9);
        ffn_csv_num(fp, r->alpha, 9);
        fprintf(fp, ",%llu,%s", (unsigned long long)r->synth.seed, w->name);
        ffn_csv_num(fp, w->bits_per_weight, 9);
        ffn_csv_num(fp, w->m.rel_l2, 9);
        ffn_csv_num(fp, w->m.max_abs, 9);
        ffn_csv_num(fp, w->m.cosine, 9);
        fprintf(fp, ",%s", ran ? w->speed.kernel : "");
        ffn_csv_num(fp, ran ? w->speed.time_s : NAN, 9);
        ffn_csv_num(fp, ran ? w->speed.speedup : NAN, 9);
        ffn_csv_num(fp, ran ? w->speed.check_rel_l2 : NAN, 9);
        fputc('\n', fp);
    }
    return finish(fp);
}
