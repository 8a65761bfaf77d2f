/* The model loader (io/load/model_load.c, io/load/hf_load.c; docs/formats-model.md):
 * models/NAME.yaml or a Hugging Face config.json into the ffn_model record of ffnroof/model.h. */
#ifndef FFNROOF_MODEL_LOAD_H
#define FFNROOF_MODEL_LOAD_H

#include "ffnroof/error.h"
#include "ffnroof/model.h"

/* Load a model from our YAML or, if the file is JSON with a "model_type", from a Hugging Face
 * config. On error returns a negative code, fills diag and leaves *m zeroed. */
int ffn_model_load(const char *path, ffn_model *m, ffn_diag *diag);

#endif
