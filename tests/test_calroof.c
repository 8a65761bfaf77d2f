/* Calibrations made by hand (no microbenchmark runs): which peaks a FFNROOF_ISA level
 * allows, the roof each kernel path gets, a reference kernel's one-core roof and compute units,
 * levels that must not become roofs, a read-write rate above the read-only one at DRAM sizes, and
 * the sysfs comparison by nearest size with one and all threads. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/calibrate.h"

Test(calroof, isa_levels_cap_the_peaks)
{
    /* avx2: the 256-bit FMA and the portable loop, nothing 512-bit, no AMX */
    cr_expect(ffn_peak_allowed_at(FFN_PEAK_FP32_PORTABLE, FFN_ISA_AVX2));
    cr_expect(ffn_peak_allowed_at(FFN_PEAK_FP32_AVX2, FFN_ISA_AVX2));
    cr_expect_not(ffn_peak_allowed_at(FFN_PEAK_FP32_AVX512, FFN_ISA_AVX2));
    cr_expect_not(ffn_peak_allowed_at(FFN_PEAK_BF16_AVX512, FFN_ISA_AVX2));
    cr_expect_not(ffn_peak_allowed_at(FFN_PEAK_BF16_AMX, FFN_ISA_AVX2));
    cr_expect(ffn_peak_allowed_at(FFN_PEAK_INT8_AVX_VNNI, FFN_ISA_AVX2), "256-bit int8");
    cr_expect_not(ffn_peak_allowed_at(FFN_PEAK_INT8_VNNI, FFN_ISA_AVX2));
    /* avx512 allows VNNI and FP16 but not BF16 or AMX; avx512_bf16 adds VDPBF16PS */
    cr_expect(ffn_peak_allowed_at(FFN_PEAK_FP32_AVX512, FFN_ISA_AVX512));
    cr_expect(ffn_peak_allowed_at(FFN_PEAK_INT8_VNNI, FFN_ISA_AVX512));
    cr_expect_not(ffn_peak_allowed_at(FFN_PEAK_BF16_AVX512, FFN_ISA_AVX512));
    cr_expect(ffn_peak_allowed_at(FFN_PEAK_BF16_AVX512, FFN_ISA_AVX512_BF16));
    cr_expect_not(ffn_peak_allowed_at(FFN_PEAK_BF16_AMX, FFN_ISA_AVX512_BF16));
    cr_expect(ffn_peak_allowed_at(FFN_PEAK_BF16_AMX, FFN_ISA_AMX));
    /* portable and ref: only the portable loops (fp32 and int8) */
    cr_expect(ffn_peak_allowed_at(FFN_PEAK_INT8_PORTABLE, FFN_ISA_PORTABLE));
    cr_expect(ffn_peak_allowed_at(FFN_PEAK_INT8_PORTABLE, FFN_ISA_REF));
    for (int k = 1; k < FFN_PEAK_COUNT; k++) {
        if (k == FFN_PEAK_INT8_PORTABLE) continue;
        cr_expect_not(ffn_peak_allowed_at((ffn_peak_kind)k, FFN_ISA_PORTABLE), "%s",
                      ffn_peak_name((ffn_peak_kind)k));
        cr_expect_not(ffn_peak_allowed_at((ffn_peak_kind)k, FFN_ISA_REF));
    }
    cr_expect(ffn_peak_allowed_at(FFN_PEAK_FP32_NEON, FFN_ISA_NEON));
    cr_expect_not(ffn_peak_allowed_at(FFN_PEAK_FP32_NEON, FFN_ISA_AVX512));
    cr_expect_not(ffn_peak_allowed_at(FFN_PEAK_COUNT, FFN_ISA_AMX));
}

Test(calroof, each_kernel_path_gets_its_own_roof)
{
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_BF16, FFN_ISA_AMX), FFN_PEAK_BF16_AMX);
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_BF16, FFN_ISA_AVX512_BF16), FFN_PEAK_BF16_AVX512);
    /* a kernel that converts to fp32 runs on the fp32 FMA of its level */
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_BF16, FFN_ISA_AVX512), FFN_PEAK_FP32_AVX512);
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_FP16, FFN_ISA_AVX512), FFN_PEAK_FP32_AVX512);
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_FP32, FFN_ISA_AVX2), FFN_PEAK_FP32_AVX2);
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_BF16, FFN_ISA_AVX2), FFN_PEAK_FP32_AVX2);
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_FP32, FFN_ISA_PORTABLE), FFN_PEAK_FP32_PORTABLE);
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_FP32, FFN_ISA_REF), FFN_PEAK_FP32_PORTABLE);
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_FP32, FFN_ISA_NEON), FFN_PEAK_FP32_NEON);
    /* the SVE kernels' roof is SVE FMLA at the CPU's vector length, NEON's where it cannot run */
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_FP32, FFN_ISA_SVE), FFN_PEAK_FP32_SVE);
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_BF16, FFN_ISA_SVE), FFN_PEAK_FP32_SVE);
    cr_expect_eq(ffn_calibration_roof_fallback(FFN_PEAK_FP32_SVE), FFN_PEAK_FP32_NEON);
    cr_expect(ffn_peak_allowed_at(FFN_PEAK_FP32_SVE, FFN_ISA_SVE));
    cr_expect_not(ffn_peak_allowed_at(FFN_PEAK_FP32_SVE, FFN_ISA_NEON));
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_COUNT, FFN_ISA_NEON), -1);
}

Test(calroof, int8_roofs_are_the_dot_products_of_each_level)
{
    /* the simulator's int8 peak is that of int8 dot products (W8A8), whatever kernel stores
     * int8 weights with float activations (those run on the float roofs) */
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_INT8, FFN_ISA_AMX), FFN_PEAK_INT8_AMX);
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_INT8, FFN_ISA_AVX512_BF16), FFN_PEAK_INT8_VNNI);
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_INT8, FFN_ISA_AVX512), FFN_PEAK_INT8_VNNI);
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_INT8, FFN_ISA_AVX2), FFN_PEAK_INT8_AVX_VNNI);
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_INT8, FFN_ISA_NEON), FFN_PEAK_INT8_NEON_I8MM);
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_INT8, FFN_ISA_SVE), FFN_PEAK_INT8_SVE_SDOT);
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_INT8, FFN_ISA_PORTABLE), FFN_PEAK_INT8_PORTABLE);
    cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_INT8, FFN_ISA_REF), FFN_PEAK_INT8_PORTABLE);
    /* no CPU multiplies int4: W4A16 runs on the 16-bit roof, W4A8 on the int8 one */
    for (int i = 0; i < FFN_ISA_COUNT; i++)
        cr_expect_eq(ffn_calibration_roof_kind(FFN_DT_INT4, (ffn_isa)i), -1);
    /* a CPU without the level's best falls back along one chain, each step allowed at the
     * level it started from: Sapphire Rapids without the AMX permission, Skylake-SP (no VNNI),
     * Haswell (no AVX-VNNI), a Neoverse N1 (SDOT, no I8MM) */
    const int chain[] = {FFN_PEAK_INT8_AMX,  FFN_PEAK_INT8_VNNI,     FFN_PEAK_INT8_AVX_VNNI,
                         FFN_PEAK_INT8_AVX2, FFN_PEAK_INT8_PORTABLE, -1};
    for (int i = 0; chain[i] >= 0; i++) {
        cr_expect_eq(ffn_calibration_roof_fallback(chain[i]), chain[i + 1], "%s",
                     ffn_peak_name((ffn_peak_kind)chain[i]));
        cr_expect(ffn_peak_allowed_at((ffn_peak_kind)chain[i], FFN_ISA_AMX));
    }
    cr_expect_not(ffn_peak_allowed_at(FFN_PEAK_INT8_AMX, FFN_ISA_AVX512_BF16));
    cr_expect(ffn_peak_allowed_at(FFN_PEAK_INT8_AVX2, FFN_ISA_AVX2));
    cr_expect_eq(ffn_calibration_roof_fallback(FFN_PEAK_INT8_NEON_I8MM), FFN_PEAK_INT8_NEON_SDOT);
    cr_expect_eq(ffn_calibration_roof_fallback(FFN_PEAK_INT8_NEON_SDOT), FFN_PEAK_INT8_PORTABLE);
    cr_expect_eq(ffn_calibration_roof_fallback(FFN_PEAK_INT8_PORTABLE), -1, "always runs");
    cr_expect_eq(ffn_calibration_roof_fallback(FFN_PEAK_INT8_SVE_SDOT), -1, "SDOT is base SVE");
    cr_expect_eq(ffn_calibration_roof_fallback(FFN_PEAK_FP32_AVX512), -1);
    cr_expect(ffn_peak_allowed_at(FFN_PEAK_INT8_NEON_SDOT, FFN_ISA_NEON));
    cr_expect(ffn_peak_allowed_at(FFN_PEAK_INT8_SVE_SDOT, FFN_ISA_SVE));
    cr_expect_not(ffn_peak_allowed_at(FFN_PEAK_INT8_SVE_SDOT, FFN_ISA_NEON));
    cr_expect_not(ffn_peak_allowed_at(FFN_PEAK_INT8_NEON_SDOT, FFN_ISA_AVX512));
}

/* Two cores: L1 48 KiB, L2 2 MiB per core, L3 105 MiB shared, DRAM at the tail. */
static ffn_calibration *base(void)
{
    ffn_calibration *c = calloc(1, sizeof *c);
    cr_assert_not_null(c);
    snprintf(c->host.host, sizeof c->host.host, "testhost");
    c->threads = 2;
    c->clock.hz = 3e9;
    c->max_bytes = 512.0 * 1048576;
    c->peaks[FFN_PEAK_FP32_PORTABLE][0].flops_per_s = 20e9;
    c->peaks[FFN_PEAK_FP32_PORTABLE][1].flops_per_s = 40e9;
    c->peaks[FFN_PEAK_FP32_AVX2][0].flops_per_s = 100e9;
    c->peaks[FFN_PEAK_FP32_AVX2][1].flops_per_s = 200e9;
    c->peaks[FFN_PEAK_FP32_AVX512][0].flops_per_s = 180e9;
    c->peaks[FFN_PEAK_FP32_AVX512][1].flops_per_s = 360e9;
    c->peaks[FFN_PEAK_BF16_AMX][1].flops_per_s = 5000e9;
    c->peaks[FFN_PEAK_BF16_AVX512][1].flops_per_s = 700e9;
    c->tail_read_bps[0] = 12e9;
    c->tail_read_bps[1] = 20e9;
    static const double bw[4] = {600e9, 250e9, 60e9, 20e9}, cap1[4] = {48e3, 2e6, 105e6, 0};
    for (int t = 0; t < 2; t++) {
        ffn_level *lv = c->levels[FFN_BW_READ][t];
        for (int i = 0; i < 4; i++) {
            snprintf(lv[i].name, sizeof lv[i].name, i == 3 ? "DRAM" : "L%d", i + 1);
            lv[i].bandwidth_bps = bw[i] * (t ? 2 : 1);
            /* per-core caches double with two threads, the shared L3 does not */
            lv[i].capacity_bytes = cap1[i] * (t && i < 2 ? 2 : 1);
            lv[i].first_bytes = i ? lv[i - 1].capacity_bytes * 1.5 : 4096;
            lv[i].last_bytes = i == 3 ? c->max_bytes : lv[i].capacity_bytes * 0.7;
            lv[i].n_points = 8;
        }
        c->n_levels[FFN_BW_READ][t] = 4;
    }
    c->levels[FFN_BW_READ][1][3].bandwidth_bps = 20e9;
    return c;
}

Test(calroof, spec_takes_the_roof_of_the_kernel_path)
{
    ffn_calibration *c = base();
    c->roof_set = true;
    for (int d = 0; d < FFN_DT_COUNT; d++)
        c->roof_kind[d] = -1;
    /* FFNROOF_ISA=avx2 on an AVX-512 host: the kernels run AVX2 */
    c->roof_isa[FFN_DT_FP32] = c->roof_isa[FFN_DT_BF16] = FFN_ISA_AVX2;
    c->roof_kind[FFN_DT_FP32] = c->roof_kind[FFN_DT_BF16] = FFN_PEAK_FP32_AVX2;
    ffn_hw hw;
    cr_assert_eq(ffn_calibration_to_hw(c, true, &hw), 0);
    cr_expect_float_eq(hw.peak_flops[FFN_DT_FP32], 200e9, 1);
    cr_expect_float_eq(hw.peak_flops[FFN_DT_BF16], 200e9, 1, "not AMX: bench runs AVX2");
    cr_expect_eq(hw.compute_units, 2);
    /* an AMX bf16 kernel: the AMX roof */
    c->roof_isa[FFN_DT_BF16] = FFN_ISA_AMX;
    c->roof_kind[FFN_DT_BF16] = FFN_PEAK_BF16_AMX;
    cr_assert_eq(ffn_calibration_to_hw(c, false, &hw), 0);
    cr_expect_float_eq(hw.peak_flops[FFN_DT_BF16], 5000e9, 1);
    /* int8: the roof of the dot products calibrate picked (VNNI), not the best int8 kind
     * (AMX) and not the fp32 roof of a weight-only int8 kernel */
    c->peaks[FFN_PEAK_INT8_VNNI][1].flops_per_s = 1400e9;
    c->peaks[FFN_PEAK_INT8_AMX][1].flops_per_s = 10000e9;
    c->roof_isa[FFN_DT_INT8] = FFN_ISA_AVX512;
    c->roof_kind[FFN_DT_INT8] = FFN_PEAK_INT8_VNNI;
    c->roof_isa[FFN_DT_INT4] = FFN_ISA_AVX512;
    cr_assert_eq(ffn_calibration_to_hw(c, true, &hw), 0);
    cr_expect_float_eq(hw.peak_flops[FFN_DT_INT8], 1400e9, 1);
    cr_expect_float_eq(hw.peak_flops[FFN_DT_INT4], 0, 0, "no int4 roof");
    /* the reference kernel: one thread, the one-core roof */
    c->roof_isa[FFN_DT_FP32] = FFN_ISA_REF;
    c->roof_kind[FFN_DT_FP32] = FFN_PEAK_FP32_PORTABLE;
    cr_assert_eq(ffn_calibration_to_hw(c, false, &hw), 0);
    cr_expect_float_eq(hw.peak_flops[FFN_DT_FP32], 20e9, 1);
    cr_expect_eq(hw.compute_units, 1);
    free(c);
}

Test(calroof, levels_that_are_not_roofs)
{
    ffn_calibration *c = base();
    ffn_hw hw;
    cr_assert_eq(ffn_calibration_to_hw(c, false, &hw), 0);
    cr_assert_eq(hw.n_levels, 3);
    cr_expect(ffn_calibration_level_ok(c, FFN_BW_READ, 1, 1));
    /* L3 measured faster than L2 (an artefact): L2 is not a roof any more (a larger level is
     * faster), nor is a level slower than main memory */
    c->levels[FFN_BW_READ][1][2].bandwidth_bps = 600e9;
    cr_expect_not(ffn_calibration_level_ok(c, FFN_BW_READ, 1, 1));
    c->levels[FFN_BW_READ][1][2].bandwidth_bps = 10e9;
    cr_expect_not(ffn_calibration_level_ok(c, FFN_BW_READ, 1, 2));
    cr_assert_eq(ffn_calibration_to_hw(c, false, &hw), 0);
    cr_expect_eq(hw.n_levels, 2);
    c->n_points = 1; /* review needs a curve */
    c->points[0] = (ffn_bw_point){FFN_BW_READ, 2, 4096, 1e12, 1e12, 3};
    ffn_calibration_review(c);
    cr_expect(strstr(c->notes, "all-threads read plateau L3") != NULL, "%s", c->notes);
    cr_expect(strstr(c->notes, "not written as a roof") != NULL);
    free(c);
}

/* A large L3 that ends before the tail (the last octave of the sweep, where the memory roof is
 * read) is a cache however close to the end it comes: a family 6 model 207 VM
 * read 61 GB/s with two threads up to 193 MiB of a 512 MiB sweep and 34 GB/s beyond, and the
 * quarter-of-the-sweep rule before this one dropped that L3 from the spec. A plateau that
 * reaches into the tail stays main memory. */
Test(calroof, a_large_l3_that_ends_before_the_tail_is_a_cache)
{
    ffn_calibration *c = base();
    for (int t = 0; t < 2; t++) {
        ffn_level *l3 = &c->levels[FFN_BW_READ][t][2];
        l3->capacity_bytes = 200.0 * 1048576;
        l3->last_bytes = 193.0 * 1048576; /* past 512/4 MiB, before 512/2 */
        c->levels[FFN_BW_READ][t][3].first_bytes = 215.0 * 1048576;
    }
    cr_expect(ffn_calibration_level_ok(c, FFN_BW_READ, 1, 2));
    ffn_hw hw;
    cr_assert_eq(ffn_calibration_to_hw(c, false, &hw), 0);
    cr_assert_eq(hw.n_levels, 3);
    cr_expect_str_eq(hw.levels[2].name, "L3");
    cr_expect_float_eq(hw.levels[2].bandwidth_bps, 120e9, 1);
    cr_expect_float_eq(hw.levels[2].capacity_bytes, 200.0 * 1048576, 1,
                       "the one-thread boundary, as large: %g", hw.levels[2].capacity_bytes);
    for (int t = 0; t < 2; t++)
        c->levels[FFN_BW_READ][t][2].last_bytes = 300.0 * 1048576; /* into the tail */
    cr_expect_not(ffn_calibration_level_ok(c, FFN_BW_READ, 1, 2));
    cr_assert_eq(ffn_calibration_to_hw(c, false, &hw), 0);
    cr_expect_eq(hw.n_levels, 2);
    free(c);
}

Test(calroof, read_write_above_read_only_at_dram_is_flagged)
{
    ffn_calibration *c = base();
    size_t n = 0;
    for (double s = 256.0 * 1048576; s <= c->max_bytes; s *= 1.41) {
        c->points[n++] = (ffn_bw_point){FFN_BW_READ, 2, s, 20e9, 19e9, 3};
        c->points[n++] = (ffn_bw_point){FFN_BW_TRIAD, 2, s, 27e9, 26e9, 3};
        c->points[n++] = (ffn_bw_point){FFN_BW_COPY, 2, s, 19e9, 18e9, 3};
    }
    c->n_points = n;
    ffn_calibration_review(c);
    cr_expect(strstr(c->notes, "triad (read-write) at DRAM sizes with 2 thread(s)") != NULL, "%s",
              c->notes);
    cr_expect(strstr(c->notes, "copy (read-write) at DRAM sizes") == NULL, "copy is below read");
    ffn_hw hw;
    cr_assert_eq(ffn_calibration_to_hw(c, false, &hw), 0);
    cr_expect_float_eq(hw.mem_bandwidth_bps, 20e9, 1, "the memory roof stays read-only");
    free(c);
}

Test(calroof, sysfs_by_nearest_size_with_one_and_all_threads)
{
    ffn_calibration *c = base();
    c->n_points = 1;
    c->points[0] = (ffn_bw_point){FFN_BW_READ, 1, 4096, 1e12, 1e12, 3};
    /* sysfs lists L1d, L2 and L3 true to the hardware: nothing to say but per-core / shared */
    const ffn_sysfs_cache sys[3] = {
        {1, "Data", 48e3, 1}, {2, "Unified", 2e6, 1}, {3, "Unified", 105e6, 2}};
    memcpy(c->host.caches, sys, sizeof sys);
    c->host.n_caches = 3;
    ffn_calibration_review(c);
    cr_expect(strstr(c->notes, "sysfs says") == NULL, "%s", c->notes);
    cr_expect(strstr(c->notes, "L1 per-core") != NULL, "%s", c->notes);
    cr_expect(strstr(c->notes, "L2 per-core") != NULL);
    cr_expect(strstr(c->notes, "L3 shared") != NULL);
    /* a boundary that grew only x1.1 with two threads is shared (a Zen 4 VM's L2), one that
     * grew x1.4 partly shared */
    c->notes[0] = 0;
    c->levels[FFN_BW_READ][1][1].capacity_bytes = 2.2e6;
    c->levels[FFN_BW_READ][1][2].capacity_bytes = 147e6;
    ffn_calibration_review(c);
    cr_expect(strstr(c->notes, "L2 shared (x1.1") != NULL, "%s", c->notes);
    cr_expect(strstr(c->notes, "L3 partly shared (x1.4") != NULL, "%s", c->notes);
    c->levels[FFN_BW_READ][1][1].capacity_bytes = 4e6;
    c->levels[FFN_BW_READ][1][2].capacity_bytes = 105e6;
    /* a VM's sysfs: no L2 listed, L3 said to be 16 MiB: the L3 entry is compared with the
     * 105 MB boundary (nearest), not the 2 MB one (by index) */
    c->notes[0] = 0;
    const ffn_sysfs_cache vm[2] = {{1, "Data", 48e3, 1}, {3, "Unified", 16.0 * 1048576, 2}};
    memcpy(c->host.caches, vm, sizeof vm);
    c->host.n_caches = 2;
    ffn_calibration_review(c);
    cr_expect(strstr(c->notes, "sysfs says L3 = 16 MiB but the nearest measured boundary (L3, one "
                               "thread)") != NULL,
              "%s", c->notes);
    cr_expect(strstr(c->notes, "L1 = ") == NULL, "%s", c->notes);
    /* the 2 MB plateau pairs with nothing listed, between L1 and L3: it is the L2 sysfs hid */
    cr_expect_str_eq(c->levels[FFN_BW_READ][0][1].name, "L2", "%s", c->notes);
    cr_expect_str_eq(c->levels[FFN_BW_READ][0][2].name, "L3");
    free(c);
}

/* The notes class each level per-core or shared by how its boundary grew with the threads; where
 * the all-threads curve merged two levels (its "L2" ends at the L3's size, x14) that is not a
 * cache that grew, and the notes say the curves cut their levels differently instead. */
Test(calroof, levels_cut_differently_are_not_classed)
{
    ffn_calibration *c = base();
    c->levels[FFN_BW_READ][1][1].capacity_bytes = 14 * 2e6;
    c->n_points = 1; /* the review runs on a calibration that swept */
    c->points[0] = (ffn_bw_point){FFN_BW_READ, 1, 4096, 600e9, 600e9, 3};
    ffn_calibration_review(c);
    cr_expect(strstr(c->notes, "L1 per-core (x2 with 2 threads)") != NULL, "%s", c->notes);
    cr_expect(strstr(c->notes, "L2 not compared (one thread") != NULL, "%s", c->notes);
    cr_expect(strstr(c->notes, "L2 per-core") == NULL, "%s", c->notes);
    cr_expect(strstr(c->notes, "L3 shared (x1 with 2 threads)") != NULL, "%s", c->notes);
    /* an all-threads boundary below the one-thread one (x0.38: a family 6 model 207 VM's two-thread
     * "L1" at 18.8 KiB) is noise, not a shared cache */
    c->notes[0] = 0;
    c->levels[FFN_BW_READ][1][1].capacity_bytes = 4e6;
    c->levels[FFN_BW_READ][1][0].capacity_bytes =
        0.38 * c->levels[FFN_BW_READ][0][0].capacity_bytes;
    ffn_calibration_review(c);
    cr_expect(strstr(c->notes, "L1 not compared (one thread") != NULL, "%s", c->notes);
    cr_expect(strstr(c->notes, "shrank with more threads") != NULL, "%s", c->notes);
    cr_expect(strstr(c->notes, "L1 shared") == NULL, "%s", c->notes);
    cr_expect(strstr(c->notes, "L2 per-core (x2 with 2 threads)") != NULL, "%s", c->notes);
    free(c);
}

/* Where L1 and L2 read alike (AVX2 loads on a core with a 2 MiB L2, as on a family 6 model 207 VM
 * at FFNROOF_ISA=avx2), the first plateau runs up to the L2 size: it is named L2, the next L3, in
 * the notes and in the spec, not L1 and L2 by position. */
Test(calroof, plateaus_take_the_names_of_the_caches_they_pair_with)
{
    ffn_calibration *c = base();
    static const double bw[3] = {90e9, 40e9, 12e9}, cap1[3] = {2e6, 100e6, 0};
    for (int t = 0; t < 2; t++) {
        ffn_level *lv = c->levels[FFN_BW_READ][t];
        memset(lv, 0, sizeof c->levels[FFN_BW_READ][t]);
        for (int i = 0; i < 3; i++) {
            snprintf(lv[i].name, sizeof lv[i].name, i == 2 ? "DRAM" : "L%d", i + 1);
            lv[i].bandwidth_bps = bw[i] * (t ? 2 : 1);
            lv[i].capacity_bytes = cap1[i] * (t && i == 0 ? 2 : 1);
            lv[i].first_bytes = i ? lv[i - 1].capacity_bytes * 1.5 : 4096;
            lv[i].last_bytes = i == 2 ? c->max_bytes : lv[i].capacity_bytes * 0.7;
            lv[i].n_points = 8;
        }
        c->n_levels[FFN_BW_READ][t] = 3;
    }
    c->n_points = 1;
    c->points[0] = (ffn_bw_point){FFN_BW_READ, 1, 4096, 90e9, 90e9, 3};
    const ffn_sysfs_cache sys[3] = {
        {1, "Data", 48e3, 1}, {2, "Unified", 2e6, 1}, {3, "Unified", 300.0 * 1048576, 2}};
    memcpy(c->host.caches, sys, sizeof sys);
    c->host.n_caches = 3;
    ffn_calibration_review(c);
    for (int t = 0; t < 2; t++) {
        cr_expect_str_eq(c->levels[FFN_BW_READ][t][0].name, "L2", "t=%d: %s", t, c->notes);
        cr_expect_str_eq(c->levels[FFN_BW_READ][t][1].name, "L3", "t=%d", t);
        cr_expect_str_eq(c->levels[FFN_BW_READ][t][2].name, "DRAM", "t=%d", t);
    }
    cr_expect(strstr(c->notes, "L2 per-core") != NULL, "%s", c->notes);
    ffn_hw hw;
    cr_assert_eq(ffn_calibration_to_hw(c, false, &hw), 0);
    cr_assert_eq(hw.n_levels, 2);
    cr_expect_str_eq(hw.levels[0].name, "L2");
    cr_expect_str_eq(hw.levels[1].name, "L3");
    free(c);
}

/* Hand-made levels shaped like one curve: boundaries in bytes, bandwidths in GB/s, the last
 * level DRAM (no boundary). */
static void set_curve(ffn_calibration *c, ffn_bw_kernel k, int t, const double *cap,
                      const double *gbs, int n)
{
    ffn_level *lv = c->levels[k][t];
    memset(lv, 0, sizeof c->levels[k][t]);
    for (int i = 0; i < n; i++) {
        snprintf(lv[i].name, sizeof lv[i].name, i == n - 1 ? "DRAM" : "L%d", i + 1);
        lv[i].bandwidth_bps = gbs[i] * 1e9;
        lv[i].capacity_bytes = i == n - 1 ? 0 : cap[i];
        lv[i].first_bytes = i ? cap[i - 1] * 1.3 : 4096;
        lv[i].last_bytes = i == n - 1 ? c->max_bytes : cap[i] * 0.7;
        lv[i].n_points = 6;
    }
    c->n_levels[k][t] = n;
}

/* A Zen 5 microVM (BENCHMARKS.md): no sysfs caches, CPUID's legacy leaves give
 * L1d 48 KiB, L2 1 MiB and the socket's 508 MiB L3. Its one-thread read curve shows L3 as two
 * plateaus (7 and 45 MiB), its triad curve three. They are named after the caches: L3a, L3b
 * (and L3c), never the L4 and L5 of a CPU with three levels; the note says CPUID listed them. */
Test(calroof, cpuid_caches_name_a_split_l3)
{
    ffn_calibration *c = base();
    c->n_points = 1;
    c->points[0] = (ffn_bw_point){FFN_BW_READ, 1, 4096, 1e12, 1e12, 3};
    const ffn_sysfs_cache cpuid[3] = {{1, "Data", 48 * 1024.0, 1},
                                      {2, "Unified", 1048576.0, 1},
                                      {3, "Unified", 508 * 1048576.0, 0}};
    memcpy(c->host.caches, cpuid, sizeof cpuid);
    c->host.n_caches = 3;
    snprintf(c->host.cache_source, sizeof c->host.cache_source, "CPUID");
    const double cap1[4] = {50e3, 977e3, 7.05e6, 47.3e6}, bw1[5] = {359, 141, 93, 76, 26};
    const double capn[3] = {100e3, 1.8e6, 75.3e6}, bwn[4] = {552, 267, 168, 57};
    const double capt[5] = {105e3, 1.39e6, 5.0e6, 63.2e6, 250e6},
                 bwt[6] = {646, 268, 183, 147, 64, 53};
    set_curve(c, FFN_BW_READ, 0, cap1, bw1, 5);
    set_curve(c, FFN_BW_READ, 1, capn, bwn, 4);
    set_curve(c, FFN_BW_TRIAD, 1, capt, bwt, 6);
    c->tail_read_bps[0] = 26e9;
    c->tail_read_bps[1] = 57e9;
    ffn_calibration_review(c);
    cr_expect(strstr(c->notes, "CPUID lists 3 data cache level(s), the one-thread read sweep "
                               "shows 4") != NULL,
              "%s", c->notes);
    cr_expect(strstr(c->notes, "sysfs") == NULL, "%s", c->notes);
    static const char *const one[5] = {"L1", "L2", "L3a", "L3b", "DRAM"};
    static const char *const all[4] = {"L1", "L2", "L3", "DRAM"};
    static const char *const triad[6] = {"L1", "L2", "L3a", "L3b", "L3c", "DRAM"};
    for (int i = 0; i < 5; i++)
        cr_expect_str_eq(c->levels[FFN_BW_READ][0][i].name, one[i], "one thread, level %d", i);
    for (int i = 0; i < 4; i++)
        cr_expect_str_eq(c->levels[FFN_BW_READ][1][i].name, all[i], "all threads, level %d", i);
    for (int i = 0; i < 6; i++)
        cr_expect_str_eq(c->levels[FFN_BW_TRIAD][1][i].name, triad[i], "triad, level %d", i);
    ffn_hw hw;
    cr_assert_eq(ffn_calibration_to_hw(c, false, &hw), 0);
    cr_assert_eq(hw.n_levels, 3);
    cr_expect_str_eq(hw.levels[2].name, "L3");
    free(c);
}

/* A Zen 4 VM's one-thread curve under FFNROOF_ISA=portable: 16-byte
 * loads read L1, L2 and L3 alike (102 GB/s to 21.1 MiB), then a stretch at 44.6 GB/s to
 * 50.2 MiB before DRAM. The first boundary pairs with L3 (32 MiB); the second pairs with no
 * cache (L2 = 1 MiB would cross that pair) and, past the last level sysfs lists, is part of L3:
 * L3a, L3b, never an "L2" after L3. */
Test(calroof, a_plateau_past_the_last_cache_is_part_of_it)
{
    ffn_calibration *c = base();
    c->threads = 1;
    c->n_levels[FFN_BW_READ][1] = 0;
    c->n_points = 1;
    c->points[0] = (ffn_bw_point){FFN_BW_READ, 1, 4096, 1e11, 1e11, 3};
    const ffn_sysfs_cache sys[3] = {{1, "Data", 32 * 1024.0, 1},
                                    {2, "Unified", 1048576.0, 1},
                                    {3, "Unified", 32 * 1048576.0, 2}};
    memcpy(c->host.caches, sys, sizeof sys);
    c->host.n_caches = 3;
    const double cap[2] = {21.1 * 1048576, 50.2 * 1048576}, gbs[3] = {102.0, 44.6, 29.6};
    set_curve(c, FFN_BW_READ, 0, cap, gbs, 3);
    c->tail_read_bps[0] = 28e9;
    c->tail_read_bps[1] = 0;
    ffn_calibration_review(c);
    static const char *const want[3] = {"L3a", "L3b", "DRAM"};
    for (int i = 0; i < 3; i++)
        cr_expect_str_eq(c->levels[FFN_BW_READ][0][i].name, want[i], "level %d: %s", i, c->notes);
    cr_expect(strstr(c->notes, "L2 = 1 MiB but no boundary") != NULL, "%s", c->notes);
    free(c);
}
