/* The terminal table of `ffnroof predict` results (report/predict_table.c): an 80-column table
 * with units, one block per run. It writes to a stream the caller owns. The JSON and CSV
 * writers of the same results are in ffnroof/predict_write.h (io/write/). */
#ifndef FFNROOF_REPORT_H
#define FFNROOF_REPORT_H

#include <stdio.h>

#include "ffnroof/predict_write.h"

int ffn_write_predict_table(FILE *fp, const ffn_predict_report *r);

#endif
