/* The AMX tile set-up shared by the bf16 (ukr_amx.c) and int8 (ukr_amx_i8.c) microkernels, which
 * both use the same eight tiles of 16 rows x 64 bytes: 0-3 the C blocks (2x2 of 16x16 fp32 or
 * int32), 4-5 A, 6-7 B. Included only by files compiled with the AMX flags. */
#ifndef FFN_KERNELS_AMX_TILES_H
#define FFN_KERNELS_AMX_TILES_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

typedef struct ffn__amx_tilecfg {
    uint8_t palette, start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} ffn__amx_tilecfg;

/* Per-thread configuration before the first tile instruction (the table's begin hook). */
static inline void ffn__amx_begin(void)
{
    ffn__amx_tilecfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int i = 0; i < 8; i++) {
        cfg.colsb[i] = 64;
        cfg.rows[i] = 16;
    }
    /* GCC 12's ldtilecfg builtin does not tell the optimiser that it reads the 64 bytes, so
     * once this is inlined the rows/colsb stores can be dropped as dead (seen: only the palette
     * byte written, then a #GP on the first tile load). Let cfg escape into memory first. */
    __asm__ volatile("" : : "r"(&cfg) : "memory");
    _tile_loadconfig(&cfg);
}

/* Release the tile state after the last tile instruction (the table's end hook). */
static inline void ffn__amx_end(void)
{
    _tile_release();
}

#endif
