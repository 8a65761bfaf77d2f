/* The checks both model loaders end with (io/load/model_io.h): model_load.c for our YAML and
 * hf_load.c for a Hugging Face config.json call it, so it lives in neither. */
#include "model_io.h"

int ffn__model_finish(ffn_ydoc *y, yaml_node_t *at, ffn_model *m)
{
    ffn_params p;
    int rc = ffn_model_params(m, &p);
    if (rc == FFN_EOVERFLOW)
        return ffn_y_error(y, at, FFN_EOVERFLOW,
                           "the parameter count overflows 64 bits ('hidden' x 'intermediate' x "
                           "'experts' x 'layers' is too large)");
    if (rc) return ffn_y_error(y, at, rc, "cannot count the parameters: %s", ffn_strerror(rc));
    return 0;
}
