/* Shared by the libFuzzer targets in fuzz/ (docs/reliability.md): the loaders read paths, so
 * each input is written to one scratch file per process, on tmpfs where there is one. */
#ifndef FFN_FUZZ_H
#define FFN_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "ffnroof/error.h"

/* Write data to this process's scratch file ending in suffix (".yaml", ".json", ".csv", ...)
 * in $FFNROOF_FUZZ_DIR (else /dev/shm, else /tmp) and return its path; aborts when it cannot
 * (a broken harness, not a finding). */
const char *ffn_fuzz_file(const uint8_t *data, size_t size, const char *suffix);

/* The contract every loader keeps on a rejection: a negative FFN_E* code and a diagnostic with
 * a message and sane positions. Aborts (a finding) otherwise. */
void ffn_fuzz_check(int rc, const ffn_diag *d);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
