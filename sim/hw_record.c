/* Helpers of the ffn_hw record (include/ffnroof/hw.h) that loaders, writers and views share:
 * a kind's name and the warning a spec with a failed or poor efficiency fit carries. */
#include "ffnroof/hw.h"

#include <stdio.h>

const char *ffn_hw_kind_name(ffn_hw_kind k)
{
    static const char *const names[] = {"gpu", "cpu", "accelerator"};
    return (unsigned)k <= FFN_HW_ACCEL ? names[k] : "?";
}

bool ffn_hw_fit_warning(const ffn_hw *hw, char *buf, size_t n)
{
    if (buf && n) buf[0] = '\0';
    if (!hw || !hw->fit.recorded) return false;
    if (hw->fit.failed) {
        if (buf)
            snprintf(buf, n,
                     "warning: the efficiency fit of spec '%s' failed: its predictions "
                     "are the plain roofline and may be far off",
                     hw->name);
        return true;
    }
    if (!(hw->fit.median_error > FFN_FIT_WARN_MEDIAN)) return false;
    if (buf)
        snprintf(buf, n,
                 "warning: the efficiency fit of spec '%s' has a median error of %.1f%% "
                 "(over %.0f%%) on its own kernel runs: its predictions are unreliable",
                 hw->name, 100 * hw->fit.median_error, 100 * FFN_FIT_WARN_MEDIAN);
    return true;
}
