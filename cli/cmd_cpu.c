/* ffnroof cpu: what this CPU has, which kernels this binary holds, and which one each weight
 * dtype gets and why (the first row of the dispatch table, newest ISA first, whose required
 * features the CPU has within the FFNROOF_ISA cap). Also `ffnroof bench --isa list`, and the
 * one-line summary of `ffnroof --version`. */
#include "cli.h"
#include "vocab.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/json.h"
#include "ffnroof/kernels.h"
#include "ffnroof/measure.h"

#define CMD "cpu"

enum { MAX_ROWS = 160 };

static const ffn_dtype wdtypes[] = {FFN_DT_FP32, FFN_DT_BF16, FFN_DT_FP16};

/* Why row k is passed over at level lv: the missing features (CPU) or the cap; "" when usable. */
static void why_not(const ffn_kernel *k, uint64_t req, ffn_isa lv, char *buf, size_t n)
{
    const uint64_t cpu = ffn_cpu_features(), cap = cpu & ffn_isa_allows(lv);
    char names[160];
    buf[0] = '\0';
    if (k->isa == FFN_ISA_REF && lv != FFN_ISA_REF) {
        snprintf(buf, n, "the scalar oracle (FFNROOF_ISA=ref runs it)");
    } else if (req & ~cpu) {
        ffn_cpu_feature_list(req & ~cpu, names, sizeof names);
        snprintf(buf, n, "this CPU lacks %s", names);
    } else if (req & ~cap) {
        ffn_cpu_feature_list(req & ~cap, names, sizeof names);
        snprintf(buf, n, "above the %s level (needs %s)", ffn_isa_name(lv), names);
    } else if (lv == FFN_ISA_REF && k->isa != FFN_ISA_REF) {
        snprintf(buf, n, "FFNROOF_ISA=ref asks for the oracle");
    } else if (ffn_kernel_avoided(k, ffn_cpu_tuning())) {
        snprintf(buf, n, "the %s tuning runs the next row", ffn_tuning_name(ffn_cpu_tuning()));
    }
}

int ffn_cli_kernel_summary(char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    ffn_isa lv;
    ffn_diag dg;
    if (ffn_isa_selected(&lv, &dg)) return snprintf(buf, n, "kernels: %s", dg.msg);
    len += (size_t)snprintf(buf, n, "kernels (isa %s, tuning %s):", ffn_isa_name(lv),
                            ffn_tuning_name(ffn_cpu_tuning()));
    for (size_t i = 0; i < sizeof wdtypes / sizeof wdtypes[0] && len < n; i++) {
        const ffn_kernel *k;
        const bool ok = ffn_kernel_best(wdtypes[i], &k, NULL) == 0;
        len += (size_t)snprintf(buf + len, n - len, " %s %s%s", ffn_dtype_name(wdtypes[i]),
                                ok ? k->name : "none", i + 1 < 3 ? "," : "");
    }
    return (int)len;
}

static void usage(FILE *fp)
{
    fputs("usage: ffnroof cpu [--format table|json]\n\n"
          "What this CPU runs: its features (CPUID + XCR0, or HWCAP), the ISA levels it can\n"
          "run, every kernel this binary holds in dispatch order with the features each\n"
          "needs, and the kernel each weight dtype gets, with the reason the rows above it\n"
          "were passed over. FFNROOF_ISA=ref|portable|avx2|avx512|avx512_bf16|amx|neon|sve\n"
          "caps dispatch at that level (a level this CPU cannot run is an error, exit 2).\n"
          "FFNROOF_TUNING=default|intel picks the measured kernel variants of another CPU\n"
          "class (default: intel on GenuineIntel CPUs, else default).\n\n",
          fp);
    ffn_cli_help_words(fp, CMD, (const int[]){FFN_O_FORMAT, 0});
    fputs("\nExit codes: 0 ok, 1 failed, 2 bad usage.\n", fp);
}

static int print_table(ffn_isa lv, const char *env)
{
    ffn_host_info h;
    memset(&h, 0, sizeof h);
    ffn_host_info_get(&h);
    char feats[512], usable[256];
    ffn_cpu_feature_list(ffn_cpu_features(), feats, sizeof feats);
    ffn_isa_usable_list(usable, sizeof usable);
    printf("cpu:       %s (%d online CPUs)\n", h.cpu_model[0] ? h.cpu_model : "unknown",
           h.online_cpus);
    printf("features:  %s\n", feats[0] ? feats : "(none beyond the baseline ISA)");
    const size_t vl = ffn_cpu_sve_vl_bytes();
    if (vl) printf("sve:       %zu-bit vectors\n", vl * 8);
    printf("isa:       %s selected (%s); this CPU runs: %s\n", ffn_isa_name(lv),
           env && *env ? "FFNROOF_ISA" : "the highest it runs", usable);
    const ffn_tuning t = ffn_cpu_tuning();
    printf("tuning:    %s (%s): %s; FFNROOF_TUNING=default|intel\n", ffn_tuning_name(t),
           ffn_cpu_tuning_source(), ffn_tuning_what(t));

    const ffn_kernel *ks[MAX_ROWS];
    uint64_t req[MAX_ROWS];
    size_t nk = ffn_kernel_table(ks, req, MAX_ROWS);
    if (nk > MAX_ROWS) nk = MAX_ROWS;
    printf("\nkernels in this binary (dispatch order, newest ISA first):\n");
    printf("  %-28s %-12s %-5s %-40s %s\n", "kernel", "isa", "dtype", "needs", "here");
    for (size_t i = 0; i < nk; i++) {
        char needs[160], why[200];
        ffn_cpu_feature_list(req[i], needs, sizeof needs);
        why_not(ks[i], req[i], lv, why, sizeof why);
        printf("  %-28s %-12s %-5s %-40s %s\n", ks[i]->name, ffn_isa_name(ks[i]->isa),
               ffn_dtype_name(ks[i]->wdtype), needs[0] ? needs : "-", why[0] ? why : "runs");
    }
    printf("\nper weight dtype:\n");
    for (size_t d = 0; d < sizeof wdtypes / sizeof wdtypes[0]; d++) {
        const ffn_kernel *best;
        ffn_diag dg;
        if (ffn_kernel_get(lv, wdtypes[d], &best, &dg)) {
            printf("  %-5s none: %s\n", ffn_dtype_name(wdtypes[d]), dg.msg);
            continue;
        }
        printf("  %-5s %s", ffn_dtype_name(wdtypes[d]), best->name);
        const char *sep = " (passed over: ";
        bool any = false;
        for (size_t i = 0; i < nk && ks[i] != best; i++) {
            if (ks[i]->wdtype != wdtypes[d]) continue;
            char why[200];
            why_not(ks[i], req[i], lv, why, sizeof why);
            printf("%s%s, %s", sep, ks[i]->name, why);
            sep = "; ";
            any = true;
        }
        printf("%s\n", any ? ")" : " (the first row for this dtype)");
    }
    return FFN_EXIT_OK;
}

static int print_json(ffn_isa lv)
{
    ffn_json j;
    ffn_json_init(&j, stdout, true);
    ffn_json_obj_begin(&j, NULL);
    ffn_host_info h;
    memset(&h, 0, sizeof h);
    ffn_host_info_get(&h);
    ffn_json_str(&j, "cpu", h.cpu_model);
    ffn_json_arr_begin(&j, "features");
    const uint64_t f = ffn_cpu_features();
    for (unsigned b = 0; b < 64; b++)
        if ((f >> b) & 1u) ffn_json_str(&j, NULL, ffn_cpu_feature_name(1ull << b));
    ffn_json_arr_end(&j);
    ffn_json_num(&j, "sve_vector_bits", (double)ffn_cpu_sve_vl_bytes() * 8);
    ffn_json_str(&j, "isa_selected", ffn_isa_name(lv));
    ffn_json_str(&j, "tuning", ffn_tuning_name(ffn_cpu_tuning()));
    ffn_json_str(&j, "tuning_source", ffn_cpu_tuning_source());
    ffn_json_arr_begin(&j, "isa_usable");
    for (int i = 0; i < FFN_ISA_COUNT; i++)
        if (ffn_isa_available((ffn_isa)i)) ffn_json_str(&j, NULL, ffn_isa_name((ffn_isa)i));
    ffn_json_arr_end(&j);
    const ffn_kernel *ks[MAX_ROWS];
    uint64_t req[MAX_ROWS];
    size_t nk = ffn_kernel_table(ks, req, MAX_ROWS);
    if (nk > MAX_ROWS) nk = MAX_ROWS;
    ffn_json_arr_begin(&j, "kernels");
    for (size_t i = 0; i < nk; i++) {
        char needs[160], why[200];
        ffn_cpu_feature_list(req[i], needs, sizeof needs);
        why_not(ks[i], req[i], lv, why, sizeof why);
        ffn_json_obj_begin(&j, NULL);
        ffn_json_str(&j, "name", ks[i]->name);
        ffn_json_str(&j, "isa", ffn_isa_name(ks[i]->isa));
        ffn_json_str(&j, "dtype", ffn_dtype_name(ks[i]->wdtype));
        ffn_json_str(&j, "needs", needs);
        ffn_json_bool(&j, "runs", why[0] == '\0');
        if (why[0]) ffn_json_str(&j, "passed_over", why);
        ffn_json_obj_end(&j);
    }
    ffn_json_arr_end(&j);
    ffn_json_obj_begin(&j, "best");
    for (size_t d = 0; d < sizeof wdtypes / sizeof wdtypes[0]; d++) {
        const ffn_kernel *best;
        if (ffn_kernel_get(lv, wdtypes[d], &best, NULL) == 0)
            ffn_json_str(&j, ffn_dtype_name(wdtypes[d]), best->name);
        else
            ffn_json_null(&j, ffn_dtype_name(wdtypes[d]));
    }
    ffn_json_obj_end(&j);
    ffn_json_obj_end(&j);
    return ffn_json_finish(&j) ? FFN_EXIT_FAIL : FFN_EXIT_OK;
}

int ffn_cli_cpu_report(ffn_format fmt)
{
    ffn_isa lv;
    ffn_diag dg;
    if (ffn_isa_selected(&lv, &dg)) return ffn_cli_fail(FFN_EXIT_USAGE, CMD, "%s", dg.msg);
    return fmt == FFN_FMT_JSON ? print_json(lv) : print_table(lv, getenv("FFNROOF_ISA"));
}

int ffn_cmd_cpu(int argc, char **argv)
{
    ffn_format fmt = FFN_FMT_TABLE;
    ffn_cli_seen seen = {0};
    ffn_cli_bind_format(&seen, FFN_O_FORMAT, false, &fmt);
    const int rc = ffn_cli_parse(CMD, argc, argv, NULL, &seen, NULL, usage, true);
    if (rc >= 0) return rc;
    return ffn_cli_cpu_report(fmt);
}
