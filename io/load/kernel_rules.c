/* Kernel rules (io/load/kernel_rules.h). */
#include "kernel_rules.h"

#include <string.h>

#define TILE_HI 4096u

/* a sequence of lo_n..hi_n whole numbers in [1, TILE_HI] into out; 1 when s is not such a
 * sequence (the caller says what it should be), else 0 or the error's code */
static int u32_list(ffn_ydoc *y, yaml_node_t *s, const char *what, const char *const *names,
                    int lo_n, int hi_n, uint32_t *out, int *n_out)
{
    const long n = s && s->type == YAML_SEQUENCE_NODE
                       ? (long)(s->data.sequence.items.top - s->data.sequence.items.start)
                       : -1;
    if (n < lo_n || n > hi_n) return 1;
    for (long j = 0; j < n; j++) {
        uint64_t v = 0;
        const int rc =
            ffn_y_node_u64(y, yaml_document_get_node(&y->doc, s->data.sequence.items.start[j]),
                           names ? names[j] : what, 1, TILE_HI, &v);
        if (rc) return rc;
        out[j] = (uint32_t)v;
    }
    if (n_out) *n_out = (int)n;
    return 0;
}

static int load_waves(ffn_ydoc *y, yaml_node_t *w, ffn_kernel_rule *k)
{
    static const char *const keys[] = {"rows", "cols", "depth", NULL};
    int rc = ffn_y_expect_map(y, w, "waves");
    if (!rc) rc = ffn_y_check_keys(y, w, keys);
    if (rc) return rc;
    yaml_node_t *rows = ffn_y_get(y, w, "rows", NULL), *cols = ffn_y_get(y, w, "cols", NULL);
    rc = u32_list(y, rows, "rows", NULL, 1, FFN_RULE_MAX_ROWS, k->rows, &k->n_rows);
    if (rc == 1)
        return ffn_y_error(y, rows ? rows : w, FFN_ESCHEMA,
                           "'waves' needs 'rows': 1 to %d row tiles, e.g. [64, 128, 256]",
                           FFN_RULE_MAX_ROWS);
    if (rc) return rc;
    static const char *const cn[] = {"cols step", "cols max"};
    uint32_t c[2] = {0, 0};
    rc = u32_list(y, cols, "cols", cn, 2, 2, c, NULL);
    if (rc == 1)
        return ffn_y_error(y, cols ? cols : w, FFN_ESCHEMA,
                           "'waves' needs 'cols: [step, max]', e.g. [16, 256]");
    if (rc) return rc;
    if (c[1] < c[0])
        return ffn_y_error(y, cols, FFN_ERANGE, "'cols' max %u is below its step %u", c[1], c[0]);
    k->col_step = c[0];
    k->col_max = c[1];
    uint64_t d = 0;
    rc = ffn_y_u64(y, w, "depth", true, 1, TILE_HI, &d);
    k->tk = (uint32_t)d;
    return rc;
}

int ffn_y_kernel_rules(ffn_ydoc *y, yaml_node_t *seq, const char *what, ffn_kernel_rules *out)
{
    static const char *const keys[] = {"m", "n", "tile", "waves", "best", "whole", NULL};
    memset(out, 0, sizeof *out);
    int rc = ffn_y_expect_seq(y, seq, what);
    for (yaml_node_item_t *it = seq ? seq->data.sequence.items.start : NULL;
         !rc && it && it < seq->data.sequence.items.top; it++) {
        yaml_node_t *r = yaml_document_get_node(&y->doc, *it);
        if (out->n >= FFN_HW_MAX_RULES)
            return ffn_y_error(y, r, FFN_ERANGE, "'%s' has more than %d rules", what,
                               FFN_HW_MAX_RULES);
        rc = ffn_y_expect_map(y, r, "kernel rule");
        if (!rc) rc = ffn_y_check_keys(y, r, keys);
        if (rc) break;
        ffn_kernel_rule *k = &out->r[out->n];
        uint64_t v = 0;
        rc = ffn_y_u64(y, r, "m", false, 1, 1u << 30, &v);
        k->m_max = (uint32_t)v;
        v = 0;
        if (!rc) rc = ffn_y_u64(y, r, "n", false, 1, 1u << 30, &v);
        k->n_max = (uint32_t)v;
        if (rc) break;
        yaml_node_t *t = ffn_y_get(y, r, "tile", NULL), *w = ffn_y_get(y, r, "waves", NULL);
        yaml_node_t *b = ffn_y_get(y, r, "best", NULL), *wh = ffn_y_get(y, r, "whole", NULL);
        if (!!t + !!w + !!b + !!wh != 1) {
            rc = ffn_y_error(y, r, FFN_ESCHEMA,
                             "each rule needs one of 'tile: [rows, cols, depth]', 'waves: {rows, "
                             "cols, depth}', 'best: true' or 'whole: true'");
            break;
        }
        if (t) {
            k->kind = FFN_RULE_TILE;
            static const char *const tn[] = {"tile rows", "tile cols", "tile depth"};
            uint32_t x[3] = {0, 0, 0};
            rc = u32_list(y, t, "tile", tn, 3, 3, x, NULL);
            if (rc == 1)
                rc = ffn_y_error(
                    y, t, FFN_ESCHEMA,
                    "each rule needs 'tile: [rows, cols, depth]', e.g. [128, 128, 128]");
            k->tm = x[0], k->tn = x[1], k->tk = x[2];
        } else if (w) {
            k->kind = FFN_RULE_WAVES;
            rc = load_waves(y, w, k);
        } else {
            const char *key = b ? "best" : "whole";
            k->kind = b ? FFN_RULE_BEST : FFN_RULE_WHOLE;
            bool yes = false;
            rc = ffn_y_bool(y, r, key, true, &yes);
            if (!rc && !yes)
                rc = ffn_y_error(y, b ? b : wh, FFN_ESCHEMA,
                                 "'%s' can only be true (leave the rule out otherwise)", key);
        }
        if (!rc) out->n++;
    }
    return rc;
}
