/* The hardware-spec writer (io/write/hw_write.c, docs/formats-hw.md): an ffn_hw record of
 * ffnroof/hw.h as hw/NAME.yaml, written atomically. */
#ifndef FFNROOF_HW_WRITE_H
#define FFNROOF_HW_WRITE_H

#include "ffnroof/error.h"
#include "ffnroof/hw.h"

/* Write hw as a spec in the format ffn_hw_load() reads (docs/formats-hw.md), with every number
 * in a unit that reads back to exactly the same double. Writes a temporary file next to path,
 * checks that it loads, then rename()s it over path, so path is never half-written. Returns 0 or
 * a negative code with diag filled. */
int ffn_hw_write(const ffn_hw *hw, const char *path, ffn_diag *diag);

#endif
