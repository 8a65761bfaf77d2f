/* Writers of `ffnroof quant`'s comparison (io/write/quant_write.c; include/ffnroof/quant_eval.h has
 * the report): the terminal table, JSON (schema ffnroof.quant/1) and CSV (one row per format,
 * the layer and inputs repeated on each). They write to a FILE the caller opened and return 0,
 * FFN_EINVAL (no report) or FFN_EIO (the stream failed). docs/quantization.md describes the
 * fields. */
#ifndef FFNROOF_QUANT_IO_H
#define FFNROOF_QUANT_IO_H

#include <stdio.h>

#include "ffnroof/quant_eval.h"

#define FFN_QUANT_SCHEMA "ffnroof.quant/1"

int ffn_quant_write_table(FILE *fp, const ffn_qeval_report *r);
int ffn_quant_write_json(FILE *fp, const ffn_qeval_report *r);
int ffn_quant_write_csv(FILE *fp, const ffn_qeval_report *r);

#endif
