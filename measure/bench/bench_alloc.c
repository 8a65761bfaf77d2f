/* The bench runner's aligned buffers (bench_internal.h), in a file of their own below the
 * prepared layer (bench_layer.c), its MoE calls (bench_moe.c) and the timing loop (bench_run.c),
 * which all allocate through it. */
#include <stdlib.h>

#include "bench_internal.h"

void *ffn__bench_xalloc(size_t n)
{
    void *p = NULL;
    if (n == 0) n = 64;
    n = (n + 63) & ~(size_t)63;
    if (posix_memalign(&p, 64, n)) return NULL;
    return p;
}
