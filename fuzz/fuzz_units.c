/* libFuzzer target: the string parsers every loader and flag goes through: units
 * (base/units.c), sweep grids and dtype pairs (io/load/scenario_load.c), dtype, activation,
 * objective and phase names. The first byte picks the parser, the rest is the text. */
#include "fuzz.h"

#include "ffnroof/plan.h"
#include "ffnroof/scenario.h"
#include "ffnroof/types.h"
#include "ffnroof/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096) return 0;
    char text[4097];
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char why[256];
    switch (data[0] % 8) {
    case 0:
    case 1:
    case 2: {
        const ffn_unit kind = (ffn_unit)(data[0] / 8 % FFN_UNIT_COUNT);
        double v = 0;
        if (ffn_units_parse(text, kind, &v, why, sizeof why) == 0) {
            /* accepted values are finite, and format without overrunning */
            if (!isfinite(v)) abort();
            char buf[64];
            ffn_units_format(v, kind, buf, sizeof buf);
        } else if (!why[0]) {
            abort();
        }
        break;
    }
    case 3: {
        static uint64_t vals[4096];
        size_t n = 0;
        const uint64_t lo = data[0] & 0x80 ? 0 : 1, hi = data[0] & 0x40 ? UINT64_MAX : 1u << 24;
        if (ffn_grid_parse(text, lo, hi, vals, 4096, &n, why, sizeof why) == 0) {
            if (n == 0 || n > 4096) abort();
            for (size_t i = 0; i < n; i++)
                if (vals[i] < lo || vals[i] > hi) abort();
        }
        break;
    }
    case 4: {
        ffn_dtype w, a;
        if (ffn_dtype_pair_parse(text, &w, &a) == 0 && (w >= FFN_DT_COUNT || a >= FFN_DT_COUNT))
            abort();
        break;
    }
    case 5: {
        ffn_dtype dt;
        if (ffn_dtype_parse(text, &dt) == 0 && !ffn_dtype_name(dt)) abort();
        break;
    }
    case 6: {
        ffn_act act;
        if (ffn_act_parse(text, &act) == 0 && !ffn_act_name(act)) abort();
        break;
    }
    default: {
        ffn_objective o;
        ffn_plan_phase ph;
        (void)ffn_objective_parse(text, &o);
        (void)ffn_plan_phase_parse(text, &ph);
        break;
    }
    }
    return 0;
}
