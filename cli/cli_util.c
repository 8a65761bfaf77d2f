/* Shared helpers of the command line (cli/cli.h): data lookup and loading, scenario start,
 * folders and atomic output files. Errors: cli_errors.c; options: options.c, option_values.c. */
#define _GNU_SOURCE
#include "cli.h"

#include "ffnroof/engine.h"
#include "ffnroof/match.h"
#include "ffnroof/scenario.h"
#include "ffnroof/engine_load.h"
#include "ffnroof/hw_load.h"
#include "ffnroof/model_load.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

const char *ffn_cli_data_dir(const char *kind, char *buf, size_t n)
{
    const char *env = getenv("FFNROOF_DATA_DIR");
    char exe[PATH_MAX];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char exe_share[PATH_MAX + 64] = "";
    if (el > 0) {
        exe[el] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(exe_share, sizeof exe_share, "%s/../share/ffnroof", exe);
        }
    }
    /* An installed binary finds the data installed beside it before the source tree it was
     * built from; a binary in a build tree has no ../share/ffnroof and uses the source tree. */
    const char *roots[] = {env, exe_share, FFNROOF_DATA_INSTALL_DIR, FFNROOF_SOURCE_DIR};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        if (!roots[i] || !roots[i][0]) continue;
        snprintf(buf, n, "%s/%s", roots[i], kind);
        if (is_dir(buf)) return buf;
    }
    return NULL;
}

static bool looks_like_path(const char *s)
{
    size_t l = strlen(s);
    return strchr(s, '/') || (l > 5 && !strcmp(s + l - 5, ".yaml")) ||
           (l > 4 && !strcmp(s + l - 4, ".yml")) || (l > 5 && !strcmp(s + l - 5, ".json"));
}

int ffn_cli_resolve(const char *cmd, const char *kind, const char *name, char *path, size_t n)
{
    if (!name || !*name) return ffn_cli_usage(cmd, "no %s given", kind);
    if (looks_like_path(name)) {
        snprintf(path, n, "%s", name);
        return 0;
    }
    char dir[PATH_MAX];
    if (ffn_cli_data_dir(kind, dir, sizeof dir)) {
        snprintf(path, n, "%s/%s.yaml", dir, name);
        if (is_file(path)) return 0;
        const char *what = !strcmp(kind, "hw")          ? "device"
                           : !strcmp(kind, "models")    ? "model"
                           : !strcmp(kind, "scenarios") ? "scenario"
                                                        : kind;
        if (strchr(name, ','))
            return ffn_cli_usage(cmd,
                                 "%s takes one %s, got the list '%s'; plan and sweep take lists",
                                 cmd, what, name);
        static char names[256][64];
        const char *known[256];
        const size_t cnt = ffn_data_names(dir, names, 256);
        for (size_t i = 0; i < cnt; i++)
            known[i] = names[i];
        size_t at = 0, sug[4];
        ffn_match_kind how;
        const int m = ffn_name_match(name, known, cnt, &at, &how);
        if (m == 0) {
            snprintf(path, n, "%s/%s.yaml", dir, known[at]);
            if (how != FFN_MATCH_CASE)
                fprintf(stderr, "ffnroof %s: %s '%s' taken as '%s'\n", cmd, what, name, known[at]);
            return 0;
        }
        const size_t ns = m == FFN_EINVAL ? ffn_name_begun(name, known, cnt, sug, 4)
                                          : ffn_name_suggest(name, known, cnt, sug, 4);
        char list[320] = "";
        for (size_t i = 0; i < ns; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     known[sug[i]]);
        if (m == FFN_EINVAL)
            return ffn_cli_usage(cmd, "%s '%s' is ambiguous: %s", what, name, list);
        if (ns) return ffn_cli_usage(cmd, "unknown %s '%s'; did you mean %s?", what, name, list);
        char all[1200] = "";
        for (size_t i = 0; i < cnt && strlen(all) + 70 < sizeof all; i++)
            snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? ", " : "", known[i]);
        return ffn_cli_usage(cmd, "unknown %s '%s'; known: %s", what, name, all);
    }
    return ffn_cli_usage(
        cmd, "no %s/ data folder found for '%s' (set FFNROOF_DATA_DIR or give a path)", kind, name);
}

static ffn_engine engine = FFN_ENGINE_DEFAULT;

int ffn_cli_engine(const char *cmd, const char *name)
{
    if (!name) return 0;
    ffn_engine e;
    if (ffn_engine_parse(name, &e) || e == FFN_ENGINE_NONE)
        return ffn_cli_usage(cmd, "--engine: '%s' is not vllm, sglang or trtllm", name);
    engine = e;
    return 0;
}

ffn_engine ffn_cli_engine_in_force(void)
{
    return engine;
}

int ffn_cli_apply_engine(ffn_hw *hw)
{
    /* a GPU's spec under the engine: its fused MoE module (every GPU), its GEMM factors (an
     * NVIDIA GPU's; sim/engine.c) */
    if (hw->kind != FFN_HW_GPU) return 0;
    char dir[PATH_MAX], path[PATH_MAX + 32];
    if (!ffn_cli_data_dir("hw", dir, sizeof dir))
        return ffn_cli_fail(FFN_EXIT_FAIL, "engine", "no hw/ data folder for the engine profiles");
    snprintf(path, sizeof path, "%s/arch/engines.yaml", dir);
    ffn_engine_profile p;
    ffn_diag d;
    if (ffn_engine_load(path, engine, &p, &d)) return ffn_cli_diag(&d);
    ffn_hw_apply_engine(hw, &p);
    return 0;
}

int ffn_cli_check_moe_kernel(const char *cmd, const char *name, bool generic, const ffn_hw *hw,
                             ffn_dtype w, ffn_dtype a)
{
    if (name && generic)
        return ffn_cli_usage(cmd, "--moe-kernel and --generic-moe exclude each other: the "
                                  "generic grouped GEMMs use no kernel family");
    if (!name || hw->kind != FFN_HW_GPU || hw->moe_engine == FFN_ENGINE_NONE) return 0;
    double lo, hi;
    const ffn_engine_moe *m =
        ffn_moe_kernel_on(hw->moe_kernels, hw->n_moe_kernels, hw, name, w, a, &lo, &hi);
    if (m && strstr(name, m->kernels)) return 0;
    char known[512] = "";
    for (int i = 0; i < hw->n_moe_kernels; i++) {
        const ffn_engine_moe *k = &hw->moe_kernels[i];
        if (!ffn_moe_kernel_of_vendor(k, hw->vendor)) continue;
        char one[96];
        snprintf(one, sizeof one, "%s%s (%s)", known[0] ? ", " : "", k->kernels,
                 ffn_dtype_name(k->dtype));
        if (strlen(known) + strlen(one) < sizeof known) strcat(known, one);
    }
    return ffn_cli_usage(cmd,
                         "--moe-kernel: %s has no fused-MoE kernel family '%s' for %s weights on "
                         "%s GPUs (hw/arch/engines.yaml); its families there: %s",
                         ffn_engine_name(hw->moe_engine), name, ffn_dtype_name(w), hw->vendor,
                         known[0] ? known : "none");
}

int ffn_cli_engine_profile(const char *cmd, ffn_engine e, ffn_engine_profile *p)
{
    char dir[PATH_MAX], path[PATH_MAX + 32];
    if (!ffn_cli_data_dir("hw", dir, sizeof dir))
        return ffn_cli_fail(FFN_EXIT_FAIL, cmd, "no hw/ data folder for the engine profiles");
    snprintf(path, sizeof path, "%s/arch/engines.yaml", dir);
    ffn_diag d;
    if (ffn_engine_load(path, e, p, &d)) return ffn_cli_diag(&d);
    return 0;
}

/* A spec whose recorded efficiency fit failed or fits badly says so wherever it is used. */
static void fit_warning(const char *cmd, const ffn_hw *hw)
{
    char fw[320];
    if (ffn_hw_fit_warning(hw, fw, sizeof fw)) fprintf(stderr, "ffnroof %s: %s\n", cmd, fw);
}

int ffn_cli_load_hw(const char *cmd, const char *name, ffn_hw *hw)
{
    char path[PATH_MAX];
    int rc = ffn_cli_resolve(cmd, "hw", name, path, sizeof path);
    if (rc) return rc;
    ffn_diag d;
    ffn_diag_clear(&d);
    if (ffn_hw_load(path, hw, &d)) return ffn_cli_diag(&d);
    fit_warning(cmd, hw);
    return ffn_cli_apply_engine(hw);
}

int ffn_cli_load_model(const char *cmd, const char *name, ffn_model *m)
{
    char path[PATH_MAX];
    int rc = ffn_cli_resolve(cmd, "models", name, path, sizeof path);
    if (rc) return rc;
    ffn_diag d;
    ffn_diag_clear(&d);
    if (ffn_model_load(path, m, &d)) return ffn_cli_diag(&d);
    return 0;
}

int ffn_cli_out_open(const char *cmd, ffn_cli_out *o, const char *path)
{
    memset(o, 0, sizeof *o);
    if (!path || !strcmp(path, "-")) {
        o->fp = stdout;
        o->is_stdout = true;
        return 0;
    }
    snprintf(o->path, sizeof o->path, "%s", path);
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", path, (long)getpid());
    /* Every --out that cannot be written is bad usage (exit 2), found before any work: a
     * directory would otherwise only fail at the final rename (exit 1). */
    if (is_dir(path))
        return ffn_cli_fail(FFN_EXIT_USAGE, cmd, "cannot write '%s': is a directory", path);
    o->fp = fopen(o->tmp, "w");
    if (!o->fp)
        return ffn_cli_fail(FFN_EXIT_USAGE, cmd, "cannot write '%s': %s", path, strerror(errno));
    return 0;
}

int ffn_cli_out_close(const char *cmd, ffn_cli_out *o, bool ok)
{
    if (o->is_stdout) {
        if (fflush(stdout) != 0 || ferror(stdout)) return FFN_EXIT_FAIL;
        return ok ? FFN_EXIT_OK : FFN_EXIT_FAIL;
    }
    if (!o->fp) return FFN_EXIT_FAIL;
    /* an earlier write that failed (EFBIG, ENOSPC) leaves the error flag even when the last
     * flush succeeds */
    const bool stream_ok = !ferror(o->fp) && fflush(o->fp) == 0;
    const int err = errno;
    bool wrote = fclose(o->fp) == 0 && stream_ok;
    const int e = stream_ok ? errno : err;
    o->fp = NULL;
    if (!ok || !wrote) {
        unlink(o->tmp);
        if (!wrote)
            return ffn_cli_fail(FFN_EXIT_FAIL, cmd, "cannot write '%s': %s", o->path,
                                e ? strerror(e) : "write error");
        return FFN_EXIT_FAIL;
    }
    if (rename(o->tmp, o->path) != 0) {
        const int re = errno;
        unlink(o->tmp);
        return ffn_cli_fail(FFN_EXIT_FAIL, cmd, "cannot create '%s': %s", o->path, strerror(re));
    }
    return FFN_EXIT_OK;
}

int ffn_cli_load_scenario_inputs(const char *cmd, ffn_scenario *sc, ffn_hw *hws, ffn_model *models)
{
    /* names given on the command line are forgiving (ffn_cli_resolve); a scenario file's are
     * checked, with suggestions, where they stand (file:line:col) */
    if (!sc->path[0]) {
        char p[PATH_MAX];
        for (size_t i = 0; i < sc->n_models + sc->n_hws; i++) {
            ffn_sc_ref *r = i < sc->n_models ? &sc->models[i] : &sc->hws[i - sc->n_models];
            const int rc =
                ffn_cli_resolve(cmd, i < sc->n_models ? "models" : "hw", r->name, p, sizeof p);
            if (rc) return rc;
            if (strlen(p) >= sizeof r->name)
                return ffn_cli_usage(cmd, "the path of '%s' is too long", r->name);
            memcpy(r->name, p, strlen(p) + 1);
        }
    }
    char hwd[PATH_MAX], md[PATH_MAX];
    const char *hw_dir = ffn_cli_data_dir("hw", hwd, sizeof hwd);
    const char *m_dir = ffn_cli_data_dir("models", md, sizeof md);
    ffn_diag d;
    ffn_diag_clear(&d);
    if (ffn_scenario_load_inputs(sc, hw_dir, m_dir, hws, models, &d)) return ffn_cli_diag(&d);
    for (size_t i = 0; i < sc->n_hws; i++) {
        fit_warning(cmd, &hws[i]);
        const int rc = ffn_cli_apply_engine(&hws[i]);
        if (rc) return rc;
    }
    return 0;
}

int ffn_cli_scenario_start(const char *cmd, const char *scenario, const char *model, const char *hw,
                           ffn_scenario *sc)
{
    if (scenario) {
        ffn_diag d;
        ffn_diag_clear(&d);
        if (ffn_scenario_load(scenario, sc, &d)) return ffn_cli_diag(&d);
    } else {
        ffn_scenario_init(sc);
        if (!model) return ffn_cli_usage(cmd, "give --scenario FILE, or --model and --hw");
        if (!hw)
            return ffn_cli_usage(cmd, "--hw is required without --scenario (e.g. --hw h100-sxm)");
    }
    int rc = 0;
    if (model) rc = ffn_cli_refs(cmd, "--model", model, sc->models, &sc->n_models);
    if (!rc && hw) {
        rc = ffn_cli_refs(cmd, "--hw", hw, sc->hws, &sc->n_hws);
        memset(sc->price_per_hour, 0, sizeof sc->price_per_hour); /* the scenario's devices' */
    }
    if (rc) ffn_scenario_release(sc);
    return rc;
}

/* Folders this process created, newest last, so that a failed run can take back the empty
 * ones. */
static char *created[32];
static size_t n_created;

int ffn_cli_mkdirs(const char *cmd, const char *dir)
{
    char path[PATH_MAX];
    if (!dir || !dir[0] || strlen(dir) >= sizeof path)
        return ffn_cli_usage(cmd, "no output folder given, or a name that is too long");
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1;; p++) {
        const bool last = *p == '\0';
        if (!last && *p != '/') continue;
        *p = '\0';
        if (mkdir(path, 0777) == 0) {
            if (n_created < sizeof created / sizeof created[0]) created[n_created++] = strdup(path);
        } else if (errno != EEXIST) {
            return ffn_cli_fail(FFN_EXIT_USAGE, cmd, "cannot create folder '%s': %s", path,
                                strerror(errno));
        }
        if (last) break;
        *p = '/';
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return ffn_cli_fail(FFN_EXIT_USAGE, cmd, "'%s' is not a folder", dir);
    if (access(path, W_OK | X_OK) != 0)
        return ffn_cli_fail(FFN_EXIT_USAGE, cmd, "cannot write in folder '%s': %s", dir,
                            strerror(errno));
    return 0;
}

void ffn_cli_remove_created_dirs(void)
{
    while (n_created > 0) {
        char *p = created[--n_created];
        if (p) rmdir(p); /* only an empty one goes */
        free(p);
    }
}
