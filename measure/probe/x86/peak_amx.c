/* Peak AMX throughput: TDPBF16PS (bf16) and TDPBSSD (int8) on full 16x64-byte tiles (compiled with
 * -mamx-tile -mamx-bf16 -mamx-int8; called only when CPUID says AMX is present, XCR0 has the tile
 * state enabled, and Linux granted this process the XTILEDATA permission, which it requires
 * before the first tile instruction: arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA = 18),
 * Linux Documentation/arch/x86/xstate.rst).
 *
 * Layout: tmm0-3 are four independent 16x16 fp32/int32 accumulators, tmm4-5 hold A (16 rows x 32
 * bf16 pairs / 64 int8), tmm6-7 hold B; one iteration is a 2x2 block, C[i][j] += A[i] B[j], so each
 * accumulator is updated once per 4 tile instructions (enough to hide the accumulate latency at
 * one tile op per 16 cycles).
 * FLOPs per iteration: bf16 4 x 2 x 16 x 16 x 32 = FFN__BF16_AMX_FLOPS_PER_ITER (65536);
 *                      int8 4 x 2 x 16 x 16 x 64 = FFN__INT8_AMX_FLOPS_PER_ITER (131072). */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../../kernels/x86_amx/amx_tiles.h"
#include "ffnroof/error.h"
#include "internal.h"

#define ARCH_GET_XCOMP_PERM 0x1022
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

static int g_amx_rc = FFN_EUNSUPPORTED;
static pthread_once_t g_amx_once = PTHREAD_ONCE_INIT;

static void amx_request(void)
{
    if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0) return;
    unsigned long bits = 0;
    if (syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM, &bits) != 0) return;
    if (bits & (1UL << XFEATURE_XTILEDATA)) g_amx_rc = 0;
}

int ffn__amx_enable(void)
{
    pthread_once(&g_amx_once, amx_request);
    return g_amx_rc;
}

/* Configure the tiles, load the same operand block into A (4, 5) and B (6, 7) and zero the
 * accumulators C (0-3): the 2x2 block the probes below repeat. */
static void start_tiles(const void *ab)
{
    ffn__amx_begin(); /* the kernels' tile set-up: eight tiles of 16 rows x 64 bytes */
    _tile_loadd(4, ab, 64);
    _tile_loadd(5, ab, 64);
    _tile_loadd(6, ab, 64);
    _tile_loadd(7, ab, 64);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
}

double ffn__peak_bf16_amx(uint64_t iters)
{
    _Alignas(64) unsigned short ab[16 * 32];
    _Alignas(64) float out[16 * 16];
    for (int i = 0; i < 16 * 32; i++)
        ab[i] = 0x3C23; /* bf16 0.01 */
    start_tiles(ab);
    for (uint64_t i = 0; i < iters; i++) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    double s = 0;
    _tile_stored(0, out, 64);
    s += out[0];
    _tile_stored(3, out, 64);
    s += out[255];
    ffn__amx_end();
    return s;
}

double ffn__peak_int8_amx(uint64_t iters)
{
    _Alignas(64) signed char ab[16 * 64];
    _Alignas(64) int out[16 * 16];
    memset(ab, 1, sizeof ab);
    start_tiles(ab);
    for (uint64_t i = 0; i < iters; i++) {
        _tile_dpbssd(0, 4, 6);
        _tile_dpbssd(1, 4, 7);
        _tile_dpbssd(2, 5, 6);
        _tile_dpbssd(3, 5, 7);
    }
    double s = 0;
    _tile_stored(0, out, 64);
    s += out[0];
    _tile_stored(3, out, 64);
    s += out[255];
    ffn__amx_end();
    return s;
}
