/* The serving-engine profile loader (io/load/engine_load.c, docs/formats-hw.md "Engine
 * profiles"): one engine's entry of hw/arch/engines.yaml into the record of ffnroof/engine.h. */
#ifndef FFNROOF_ENGINE_LOAD_H
#define FFNROOF_ENGINE_LOAD_H

#include "ffnroof/engine.h"
#include "ffnroof/error.h"

/* Read engine e's profile from a profiles file (io/load/engine_load.c). Errors are
 * `file:line:col: message` with a negative code; an engine the file does not list is
 * FFN_ESCHEMA naming the ones it does. */
int ffn_engine_load(const char *path, ffn_engine e, ffn_engine_profile *out, ffn_diag *diag);

#endif
