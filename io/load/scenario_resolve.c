/* Where the models and devices a scenario names come from (include/ffnroof/scenario.h): a path,
 * or a name looked up in the data directories (hw/, models/), and loading them. */
#define _GNU_SOURCE
#include "ffnroof/scenario.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ffnroof/hw_load.h"
#include "ffnroof/model_load.h"

static bool looks_like_path(const char *s)
{
    size_t l = strlen(s);
    return strchr(s, '/') || (l > 5 && !strcmp(s + l - 5, ".yaml")) ||
           (l > 4 && !strcmp(s + l - 4, ".yml")) || (l > 5 && !strcmp(s + l - 5, ".json"));
}

static bool is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int by_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

size_t ffn_data_names(const char *dir, char (*names)[64], size_t cap)
{
    size_t cnt = 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)) && cnt < cap) {
        size_t l = strlen(e->d_name);
        if (l > 5 && !strcmp(e->d_name + l - 5, ".yaml") && l - 5 < 64) {
            memcpy(names[cnt], e->d_name, l - 5);
            names[cnt][l - 5] = '\0';
            cnt++;
        }
    }
    closedir(d);
    qsort(names, cnt, sizeof names[0], by_name);
    return cnt;
}

int ffn_scenario_resolve(const ffn_scenario *sc, const ffn_sc_ref *ref, const char *data_dir,
                         const char *kind, char *path, size_t n, ffn_diag *diag)
{
    const char *file = sc && sc->path[0] ? sc->path : NULL;
    int line = file ? ref->line : 0, col = file ? ref->col : 0;
    if (looks_like_path(ref->name)) {
        if (ref->name[0] == '/' || !file) {
            snprintf(path, n, "%s", ref->name);
        } else {
            const char *slash = strrchr(file, '/');
            int dl = slash ? (int)(slash - file) : 0;
            if (dl)
                snprintf(path, n, "%.*s/%s", dl, file, ref->name);
            else
                snprintf(path, n, "%s", ref->name);
        }
        if (is_file(path)) return 0;
        size_t l = strlen(ref->name);
        bool calibrated = l >= 7 && !strcmp(ref->name + l - 7, "hw.yaml");
        return ffn_diag_set(diag, FFN_ENOTFOUND, file, line, col,
                            "%s file '%s' not found (looked for '%s')%s", kind, ref->name, path,
                            calibrated ? "; a calibrated host spec is written by "
                                         "'ffnroof calibrate --out DIR' as DIR/hw.yaml"
                                       : "");
    }
    if (!data_dir)
        return ffn_diag_set(
            diag, FFN_ENOTFOUND, file, line, col,
            "no data folder to look up %s '%s' (set FFNROOF_DATA_DIR or give a path)", kind,
            ref->name);
    snprintf(path, n, "%s/%s.yaml", data_dir, ref->name);
    if (is_file(path)) return 0;
    char list[400] = "";
    char names[256][64];
    size_t cnt = ffn_data_names(data_dir, names, 256);
    for (size_t i = 0; i < cnt; i++) {
        size_t l = strlen(list);
        if (l + strlen(names[i]) + 6 >= sizeof list) {
            snprintf(list + l, sizeof list - l, ", ...");
            break;
        }
        snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", names[i]);
    }
    return ffn_diag_set(diag, FFN_ENOTFOUND, file, line, col, "unknown %s '%.100s'; known: %s",
                        kind, ref->name, list);
}

int ffn_scenario_load_inputs(const ffn_scenario *sc, const char *hw_dir, const char *models_dir,
                             ffn_hw *hws, ffn_model *models, ffn_diag *diag)
{
    char path[1024];
    for (size_t i = 0; i < sc->n_models; i++) {
        int rc =
            ffn_scenario_resolve(sc, &sc->models[i], models_dir, "model", path, sizeof path, diag);
        if (!rc) rc = ffn_model_load(path, &models[i], diag);
        if (rc) return rc;
    }
    for (size_t i = 0; i < sc->n_hws; i++) {
        int rc = ffn_scenario_resolve(sc, &sc->hws[i], hw_dir, "device", path, sizeof path, diag);
        if (!rc) rc = ffn_hw_load(path, &hws[i], diag);
        if (rc) return rc;
    }
    return 0;
}
