/* One model on several devices side by side, as `ffnroof compare` and `report --compare` show
 * it: the record and its predictions (sim/compare.c). The caller fills the model, the devices
 * and the run (cli/cmd_compare.c parses the options and loads the files); the table, JSON, CSV
 * and Markdown views and the charts are in ffnroof/compare_report.h (report/compare_write.c). */
#ifndef FFNROOF_COMPARE_H
#define FFNROOF_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnroof/error.h"
#include "ffnroof/hw.h"
#include "ffnroof/model.h"
#include "ffnroof/sim.h"

#define FFN_CMP_MAX_HW 12
#define FFN_CMP_MAX_BATCH 64

typedef struct ffn_cmp_device {
    ffn_hw hw;
    char hw_path[1024];
    ffn_result prefill[FFN_CMP_MAX_BATCH];
    ffn_result decode[FFN_CMP_MAX_BATCH];
    double weight_bytes;          /* all weights of the model in wdtype */
    double share_bytes;           /* ... of which one device of the layout (TP x EP) holds */
    uint64_t devices_for_weights; /* ceil(weights / capacity); 0 when the capacity is unknown */
    bool fits;                    /* the layout's share fits one device */
    double usd_per_hour;          /* one device's price; 0 when none is known */
    char price_source[96];        /* "--price", or the list price's provider and date */
} ffn_cmp_device;

typedef struct ffn_compare {
    ffn_model model;
    char model_path[1024];
    ffn_params params;
    ffn_run run;     /* dtype, seq, tp, ep, ... shared by every point */
    unsigned phases; /* shown: bit 0 prefill, bit 1 decode (0: both) */
    uint64_t batch[FFN_CMP_MAX_BATCH];
    size_t n_batch;
    ffn_cmp_device dev[FFN_CMP_MAX_HW];
    size_t n_dev;
    char scenario[512]; /* path when --scenario was given */
} ffn_compare;

/* With model, params, run, batch[] and each device's hw set: the prefill point and the decode
 * point of every batch on every device, and whether the weights fit (one device's share of the
 * TP x EP layout, scales included). On an error, *failed is the device that failed and diag
 * says why (as ffn_predict). */
int ffn_compare_predict(ffn_compare *c, size_t *failed, ffn_diag *diag);

/* The devices one copy of the model runs on: TP x EP (1 without either). */
uint64_t ffn_compare_devices(const ffn_compare *c);

#endif
