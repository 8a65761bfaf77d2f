/* The hardware-spec loader (io/load/hw_load.c, docs/formats-hw.md): hw/NAME.yaml into the
 * ffn_hw record of ffnroof/hw.h. */
#ifndef FFNROOF_HW_LOAD_H
#define FFNROOF_HW_LOAD_H

#include "ffnroof/error.h"
#include "ffnroof/hw.h"

/* Load and validate a hardware spec. On error returns a negative code, fills diag with
 * "file:line:col: message" and leaves *hw zeroed. */
int ffn_hw_load(const char *path, ffn_hw *hw, ffn_diag *diag);

#endif
