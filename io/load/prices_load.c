/* The price table reader (include/ffnroof/prices.h). */
#include "ffnroof/prices.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LINE_MAX_BYTES = 4096 };

static const char HEADER[] = "device\tusd_per_hour\tprovider\toffer\tretrieved";

static bool is_date(const char *s, size_t n)
{
    if (n != 10) return false;
    for (size_t i = 0; i < 10; i++)
        if (i == 4 || i == 7 ? s[i] != '-' : !isdigit((unsigned char)s[i])) return false;
    const int mo = (s[5] - '0') * 10 + (s[6] - '0'), dy = (s[8] - '0') * 10 + (s[9] - '0');
    return mo >= 1 && mo <= 12 && dy >= 1 && dy <= 31;
}

static bool is_name(const char *s, size_t n)
{
    if (n == 0 || n >= 64) return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i])) return false;
    return true;
}

int ffn_prices_load(const char *path, ffn_price_table *t, ffn_diag *diag)
{
    memset(t, 0, sizeof *t);
    ffn_diag_clear(diag);
    FILE *fp = fopen(path, "rb");
    if (!fp) return ffn_diag_set(diag, FFN_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
    static char line[LINE_MAX_BYTES + 2];
    int ln = 0, rc = 0;
    bool header = false;
    while (!rc && fgets(line, sizeof line, fp)) {
        ln++;
        size_t len = strlen(line);
        if (len > LINE_MAX_BYTES) {
            rc = ffn_diag_set(diag, FFN_EPARSE, path, ln, 1, "line longer than %d bytes",
                              LINE_MAX_BYTES);
            break;
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0 || line[0] == '#') continue;
        if (!header) {
            if (strncmp(line, HEADER, sizeof HEADER - 1) ||
                (line[sizeof HEADER - 1] && line[sizeof HEADER - 1] != '\t'))
                rc = ffn_diag_set(diag, FFN_ESCHEMA, path, ln, 1,
                                  "expected the header 'device, usd_per_hour, provider, offer, "
                                  "retrieved' (tab-separated)");
            header = true;
            continue;
        }
        /* the fields, each with its column */
        const char *f[5];
        size_t fl[5];
        int col[5], nf = 0;
        const char *p = line;
        while (nf < 5) {
            const char *tab = strchr(p, '\t');
            f[nf] = p;
            fl[nf] = tab ? (size_t)(tab - p) : strlen(p);
            col[nf] = (int)(p - line) + 1;
            nf++;
            if (!tab) break;
            p = tab + 1;
        }
        if (nf < 5) {
            rc = ffn_diag_set(diag, FFN_ESCHEMA, path, ln, (int)len + 1,
                              "a row needs device, usd_per_hour, provider, offer and retrieved; "
                              "this one has %d field(s)",
                              nf);
            break;
        }
        if (!is_name(f[0], fl[0])) {
            rc = ffn_diag_set(diag, FFN_ESCHEMA, path, ln, col[0],
                              "'%.*s' is not a device name (letters, digits, '-', '_', '.')",
                              (int)(fl[0] < 64 ? fl[0] : 64), f[0]);
            break;
        }
        char num[64];
        snprintf(num, sizeof num, "%.*s", (int)(fl[1] < 63 ? fl[1] : 63), f[1]);
        char *end;
        errno = 0;
        const double usd = strtod(num, &end);
        if (fl[1] == 0 || fl[1] > 63 || *end || errno || !isfinite(usd) || !(usd > 0) ||
            usd >= 1e4) {
            rc = ffn_diag_set(diag, FFN_ESCHEMA, path, ln, col[1],
                              "usd_per_hour must be a number in (0, 10000), got '%s'", num);
            break;
        }
        if (fl[2] == 0 || fl[3] == 0) {
            rc = ffn_diag_set(diag, FFN_ESCHEMA, path, ln, col[fl[2] == 0 ? 2 : 3],
                              "the %s is empty", fl[2] == 0 ? "provider" : "offer");
            break;
        }
        if (!is_date(f[4], fl[4])) {
            rc = ffn_diag_set(diag, FFN_ESCHEMA, path, ln, col[4],
                              "retrieved must be a date YYYY-MM-DD, got '%.*s'",
                              (int)(fl[4] < 32 ? fl[4] : 32), f[4]);
            break;
        }
        char dev[64];
        snprintf(dev, sizeof dev, "%.*s", (int)fl[0], f[0]);
        if (ffn_price_find(t, dev)) {
            rc = ffn_diag_set(diag, FFN_ESCHEMA, path, ln, col[0], "device '%s' listed twice", dev);
            break;
        }
        if (t->n == FFN_PRICES_MAX) {
            rc = ffn_diag_set(diag, FFN_ESCHEMA, path, ln, 1, "more than %d rows", FFN_PRICES_MAX);
            break;
        }
        ffn_price *r = &t->rows[t->n++];
        memcpy(r->device, dev, sizeof r->device);
        r->usd_per_hour = usd;
        snprintf(r->provider, sizeof r->provider, "%.*s", (int)(fl[2] < 47 ? fl[2] : 47), f[2]);
        snprintf(r->retrieved, sizeof r->retrieved, "%.10s", f[4]);
    }
    if (!rc && ferror(fp)) rc = ffn_diag_set(diag, FFN_EIO, path, ln, 0, "read error");
    if (!rc && !header)
        rc = ffn_diag_set(diag, FFN_ESCHEMA, path, ln + 1, 1,
                          "no header line 'device, usd_per_hour, provider, offer, retrieved'");
    fclose(fp);
    if (rc) memset(t, 0, sizeof *t);
    return rc;
}

const ffn_price *ffn_price_find(const ffn_price_table *t, const char *device)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->rows[i].device, device)) return &t->rows[i];
    return NULL;
}
