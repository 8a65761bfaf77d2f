/* Internal to io/load/: the pieces shared by the model loaders. model_load.c reads our YAML and
 * dispatches Hugging Face config.json files to hf_load.c; both finish with ffn__model_finish()
 * (model_finish.c), which checks that the parameter count fits in 64 bits. */
#ifndef FFN_IO_MODEL_IO_H
#define FFN_IO_MODEL_IO_H

#include "ffnroof/model.h"
#include "ydoc.h"

/* Sane upper limits for the counts of a model file (docs/formats-model.md). They keep every
 * per-tensor product far below 2^64; the whole-model total is still overflow-checked. */
#define FFN_MODEL_MAX_HIDDEN ((uint64_t)1 << 20) /* 1,048,576 */
#define FFN_MODEL_MAX_VOCAB ((uint64_t)1 << 24)  /* 16,777,216 */
#define FFN_MODEL_MAX_INTERMEDIATE ((uint64_t)1 << 24)
#define FFN_MODEL_MAX_HEADS ((uint64_t)1 << 16)
#define FFN_MODEL_MAX_HEAD_DIM ((uint64_t)1 << 16)
#define FFN_MODEL_MAX_RANK ((uint64_t)1 << 20)
#define FFN_MODEL_MAX_POSITIONS ((uint64_t)1 << 24)
#define FFN_MODEL_MAX_TYPE_VOCAB ((uint64_t)1 << 16)
#define FFN_MODEL_MAX_EXPERTS ((uint64_t)4096)
#define FFN_MODEL_MAX_SHARED ((uint64_t)64)

/* Fill m from a Hugging Face config.json already loaded in y (root is its mapping). Unknown keys
 * are ignored; an unsupported model_type is FFN_EUNSUPPORTED at the model_type value. */
int ffn__hf_load(ffn_ydoc *y, yaml_node_t *root, ffn_model *m);

/* Checks shared by both formats; `at` is the node errors point at when no better one exists.
 * Returns 0 or a negative code with y's diag filled. */
int ffn__model_finish(ffn_ydoc *y, yaml_node_t *at, ffn_model *m);

#endif
