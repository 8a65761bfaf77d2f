/* Tests of the hardware-spec loader and writer (io/load/hw_load.c, io/write/hw_write.c): every file
 * in hw/ loads and is self-consistent, each kind of bad input in tests/data/hw/ is refused with the
 * right code at the exact line:col of the culprit, and write -> load is an exact round trip. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ffnroof/error.h"
#include "ffnroof/hw.h"
#include "ffnroof/hw_load.h"
#include "ffnroof/hw_write.h"

#define HW_DIR FFNROOF_SOURCE_DIR "/hw"
#define BAD_DIR FFNROOF_TEST_DATA "/hw"

static bool all_zero(const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        if (c[i]) return false;
    return true;
}

/* Field by field, so that a failure says which field; exact, because the writer promises it. */
static void expect_same_hw(const ffn_hw *a, const ffn_hw *b, const char *what)
{
    cr_expect_str_eq(a->name, b->name, "%s: name", what);
    cr_expect_str_eq(a->vendor, b->vendor, "%s: vendor", what);
    cr_expect_eq(a->kind, b->kind, "%s: kind", what);
    cr_expect_str_eq(a->source, b->source, "%s: source", what);
    for (int d = 0; d < FFN_DT_COUNT; d++)
        cr_expect_eq(a->peak_flops[d], b->peak_flops[d], "%s: peak[%d] %.17g vs %.17g", what, d,
                     a->peak_flops[d], b->peak_flops[d]);
    cr_expect_eq(a->compute_units, b->compute_units, "%s: compute_units", what);
    cr_expect_eq(a->clock_hz, b->clock_hz, "%s: clock", what);
    cr_expect_eq(a->mem_capacity_bytes, b->mem_capacity_bytes, "%s: capacity", what);
    cr_expect_eq(a->mem_bandwidth_bps, b->mem_bandwidth_bps, "%s: bandwidth", what);
    cr_expect_eq(a->n_levels, b->n_levels, "%s: n_levels", what);
    for (int i = 0; i < a->n_levels && i < FFN_HW_MAX_LEVELS; i++) {
        cr_expect_str_eq(a->levels[i].name, b->levels[i].name, "%s: level %d name", what, i);
        cr_expect_eq(a->levels[i].capacity_bytes, b->levels[i].capacity_bytes, "%s: level %d", what,
                     i);
        cr_expect_eq(a->levels[i].bandwidth_bps, b->levels[i].bandwidth_bps, "%s: level %d bw",
                     what, i);
        cr_expect_eq(a->levels[i].scratchpad, b->levels[i].scratchpad, "%s: level %d scratchpad",
                     what, i);
        cr_expect_eq(a->levels[i].no_partial, b->levels[i].no_partial, "%s: level %d keeps_part",
                     what, i);
        cr_expect_eq(a->eff.level_max[i], b->eff.level_max[i], "%s: level %d level_max", what, i);
    }
    const ffn_link *la[2] = {&a->scaleup, &a->scaleout}, *lb[2] = {&b->scaleup, &b->scaleout};
    for (int k = 0; k < 2; k++) {
        cr_expect_str_eq(la[k]->kind, lb[k]->kind, "%s: link %d kind", what, k);
        cr_expect_eq(la[k]->bandwidth_bps, lb[k]->bandwidth_bps, "%s: link %d bw", what, k);
        cr_expect_eq(la[k]->latency_s, lb[k]->latency_s, "%s: link %d latency", what, k);
    }
    cr_expect_eq(a->devices_per_node, b->devices_per_node, "%s: devices_per_node", what);
    cr_expect_eq(a->eff.compute_max, b->eff.compute_max, "%s: compute_max", what);
    cr_expect_eq(a->eff.compute_half_flops, b->eff.compute_half_flops, "%s: compute_half", what);
    cr_expect_eq(a->eff.memory_max, b->eff.memory_max, "%s: memory_max", what);
    cr_expect_eq(a->eff.memory_half_bytes, b->eff.memory_half_bytes, "%s: memory_half", what);
    cr_expect_eq(a->eff.memory_max_gemv, b->eff.memory_max_gemv, "%s: memory_max_gemv", what);
    cr_expect_eq(a->eff.n_tiles, b->eff.n_tiles, "%s: n_tiles", what);
    for (int i = 0; i < a->eff.n_tiles && i < FFN_HW_MAX_TILES; i++)
        cr_expect(a->eff.tiles[i][0] == b->eff.tiles[i][0] &&
                      a->eff.tiles[i][1] == b->eff.tiles[i][1],
                  "%s: tile %d", what, i);
    for (int d = 0; d < FFN_DT_COUNT; d++) {
        const ffn_tileset *ta = &a->eff.tiles_dt[d], *tb = &b->eff.tiles_dt[d];
        cr_expect_eq(ta->n_tiles, tb->n_tiles, "%s: dtype %d n_tiles", what, d);
        for (int i = 0; i < ta->n_tiles && i < FFN_HW_MAX_TILES; i++)
            cr_expect(ta->tiles[i][0] == tb->tiles[i][0] && ta->tiles[i][1] == tb->tiles[i][1],
                      "%s: dtype %d tile %d", what, d, i);
        cr_expect_eq(ta->min_rows, tb->min_rows, "%s: dtype %d min_rows", what, d);
        cr_expect_eq(ta->gemv_rows, tb->gemv_rows, "%s: dtype %d gemv_rows", what, d);
        cr_expect_eq(a->eff.dequant_cost[d], b->eff.dequant_cost[d], "%s: dtype %d dequant_cost",
                     what, d);
        cr_expect_eq(a->eff.memory_max_gemv_dt[d], b->eff.memory_max_gemv_dt[d],
                     "%s: dtype %d memory_max_gemv_by_dtype", what, d);
        const ffn_kernel_rules *ra = &a->eff.rules_dt[d], *rb = &b->eff.rules_dt[d];
        cr_expect_eq(ra->n, rb->n, "%s: dtype %d kernel rules", what, d);
        for (int i = 0; i < ra->n && i < FFN_HW_MAX_RULES; i++)
            cr_expect(!memcmp(&ra->r[i], &rb->r[i], sizeof ra->r[i]), "%s: dtype %d rule %d", what,
                      d, i);
    }
    cr_expect_eq(a->eff.pipeline, b->eff.pipeline, "%s: gemm_model", what);
    for (int d = 0; d < FFN_DT_COUNT; d++)
        cr_expect(a->unc.dt_p10[d] == b->unc.dt_p10[d] && a->unc.dt_p90[d] == b->unc.dt_p90[d],
                  "%s: dtype %d range", what, d);
    cr_expect_eq(a->eff.block_s, b->eff.block_s, "%s: block", what);
    cr_expect_eq(a->eff.fixup_s, b->eff.fixup_s, "%s: fixup", what);
    cr_expect_eq(a->eff.launch_s, b->eff.launch_s, "%s: launch", what);
    cr_expect_eq(a->eff.overlap_p, b->eff.overlap_p, "%s: overlap", what);
    cr_expect_eq(a->tdp_w, b->tdp_w, "%s: tdp", what);
}

/* A fresh scratch folder under the build tree for files the tests write. */
static void scratch_path(char *buf, size_t n, const char *leaf)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/test_hw_scratch.%ld", FFNROOF_BINARY_DIR, (long)getpid());
    mkdir(dir, 0755);
    snprintf(buf, n, "%s/%s", dir, leaf);
}

/* Remove the scratch folder of this process once its files are gone. */
static void scratch_done(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/test_hw_scratch.%ld", FFNROOF_BINARY_DIR, (long)getpid());
    rmdir(dir);
}

/* ---- every shipped spec ---------------------------------------------------------------- */

static const char *const required_devices[] = {
    "a100-sxm-80gb", "a100-pcie-40gb", "a100-pcie-80gb", "h100-sxm", "h100-pcie", "h200",
    "b200",          "mi300x",         "gaudi3",         "tpu-v5e",  "tpu-v5p",   "epyc-9654",
    "epyc-9755",     "xeon-8480",      "graviton4",      NULL};

Test(hw, every_shipped_spec_loads_and_is_consistent)
{
    DIR *d = opendir(HW_DIR);
    cr_assert(d != NULL, "cannot open %s", HW_DIR);
    int n = 0;
    bool seen[sizeof required_devices / sizeof required_devices[0]] = {false};
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0) continue;
        char path[1024], stem[256];
        snprintf(path, sizeof path, "%s/%s", HW_DIR, e->d_name);
        snprintf(stem, sizeof stem, "%.*s", (int)(len - 5), e->d_name);
        ffn_hw hw;
        ffn_diag diag;
        int rc = ffn_hw_load(path, &hw, &diag);
        char msg[1200];
        ffn_diag_format(&diag, msg, sizeof msg);
        cr_expect_eq(rc, 0, "%s does not load: %s", e->d_name, msg);
        if (rc) continue;
        n++;
        for (int i = 0; required_devices[i]; i++)
            if (!strcmp(stem, required_devices[i])) seen[i] = true;
        cr_expect_str_eq(hw.name, stem, "%s: name must match the file name", e->d_name);
        cr_expect(hw.source[0] != '\0', "%s: no source", e->d_name);
        double best = 0;
        for (int k = 0; k < FFN_DT_COUNT; k++)
            best = fmax(best, hw.peak_flops[k]);
        cr_expect(best > 0, "%s: no positive peak", e->d_name);
        cr_expect(hw.mem_bandwidth_bps > 0 && hw.mem_capacity_bytes > 0, "%s: memory", e->d_name);
        cr_expect(hw.compute_units >= 1, "%s: compute_units", e->d_name);
        /* 16-bit tensor math is never slower than fp32 on these parts, and fp8/int8 never
         * slower than 16-bit: a swapped or sparse figure would break this. */
        if (hw.peak_flops[FFN_DT_FP32] > 0 && hw.peak_flops[FFN_DT_BF16] > 0)
            cr_expect(hw.peak_flops[FFN_DT_BF16] >= hw.peak_flops[FFN_DT_FP32], "%s: bf16 < fp32",
                      e->d_name);
        if (hw.peak_flops[FFN_DT_BF16] > 0 && hw.peak_flops[FFN_DT_FP8] > 0)
            cr_expect(hw.peak_flops[FFN_DT_FP8] >= hw.peak_flops[FFN_DT_BF16], "%s: fp8 < bf16",
                      e->d_name);
        /* a per-direction link slower than memory; on-chip levels innermost (smallest) first */
        if (hw.scaleup.bandwidth_bps > 0)
            cr_expect(hw.scaleup.bandwidth_bps < hw.mem_bandwidth_bps, "%s: link vs memory",
                      e->d_name);
        /* (no capacity order check for on-chip levels: a CPU's private L2s can add up to more
         * than its shared L3, e.g. 56 x 2 MB vs 105 MB on a Xeon 8480+) */
        cr_expect(hw.devices_per_node >= 1, "%s: devices_per_node", e->d_name);
        /* the datasheet peak must be reachable from the clock, where one is given: no part
         * does more than 2^17 FLOP per cycle per compute unit */
        if (hw.clock_hz > 0)
            cr_expect(best / (hw.clock_hz * hw.compute_units) < 131072.0,
                      "%s: peak / (clock x units) is implausible", e->d_name);

        /* write -> load is exact for every shipped spec */
        char out[1024];
        scratch_path(out, sizeof out, e->d_name);
        rc = ffn_hw_write(&hw, out, &diag);
        ffn_diag_format(&diag, msg, sizeof msg);
        cr_expect_eq(rc, 0, "%s: write failed: %s", e->d_name, msg);
        ffn_hw back;
        rc = ffn_hw_load(out, &back, &diag);
        ffn_diag_format(&diag, msg, sizeof msg);
        cr_expect_eq(rc, 0, "%s: written copy does not load: %s", e->d_name, msg);
        if (!rc) expect_same_hw(&hw, &back, e->d_name);
        unlink(out);
    }
    closedir(d);
    scratch_done();
    cr_expect(n >= 14, "only %d specs in %s", n, HW_DIR);
    for (int i = 0; required_devices[i]; i++)
        cr_expect(seen[i], "hw/%s.yaml is missing or does not load", required_devices[i]);
}

Test(hw, h100_sxm_values)
{
    /* Spot check against the datasheet figures the file cites, so a unit slip (GB vs GiB,
     * sparse vs dense) in the file fails here. */
    ffn_hw hw;
    ffn_diag diag;
    cr_assert_eq(ffn_hw_load(HW_DIR "/h100-sxm.yaml", &hw, &diag), 0, "%s", diag.msg);
    cr_expect_eq(hw.kind, FFN_HW_GPU);
    cr_expect_eq(hw.compute_units, 132u);
    cr_expect_eq(hw.mem_capacity_bytes, 81559.0 * 1048576); /* as nvidia-smi reports it */
    cr_expect_eq(hw.mem_bandwidth_bps, 3.35e12);
    cr_expect_eq(hw.peak_flops[FFN_DT_BF16], 989.4e12); /* dense, not the 1979 sparse figure */
    cr_expect_eq(hw.peak_flops[FFN_DT_FP8], 1978.9e12);
    cr_expect_eq(hw.scaleup.bandwidth_bps, 450e9); /* per direction, of 900 GB/s total */
    cr_expect_eq(hw.devices_per_node, 8u);
    cr_expect_eq(hw.tdp_w, 700.0);
    /* shared memory tiles inside a kernel only; L2 keeps data across calls */
    cr_assert_eq(hw.n_levels, 2);
    cr_expect_str_eq(hw.levels[0].name, "SMEM");
    cr_expect(hw.levels[0].scratchpad);
    cr_expect(!hw.levels[1].scratchpad);
}

Test(hw, compute_max_by_dtype)
{
    /* the Xeon's AMX dtypes reach a different fraction of peak than its AVX-512 fp32 */
    char path[1024];
    snprintf(path, sizeof path, "%s/hw/xeon-8480.yaml", FFNROOF_SOURCE_DIR);
    ffn_hw hw;
    ffn_diag d;
    cr_assert_eq(ffn_hw_load(path, &hw, &d), 0, "%s", d.msg);
    cr_expect_float_eq(hw.eff.compute_max, 0.85, 1e-12);
    cr_expect_float_eq(hw.eff.compute_max_dt[FFN_DT_BF16], 0.33, 1e-12);
    cr_expect_float_eq(hw.eff.compute_max_dt[FFN_DT_FP32], 0.0, 0);
}

Test(hw, kind_names)
{
    cr_expect_str_eq(ffn_hw_kind_name(FFN_HW_GPU), "gpu");
    cr_expect_str_eq(ffn_hw_kind_name(FFN_HW_CPU), "cpu");
    cr_expect_str_eq(ffn_hw_kind_name(FFN_HW_ACCEL), "accelerator");
    cr_expect_str_eq(ffn_hw_kind_name((ffn_hw_kind)42), "?");
}

/* ---- bad input --------------------------------------------------------------------------- */

typedef struct {
    const char *file; /* in tests/data/hw/ */
    int err;
    int line, col;
    const char *needle; /* must appear in the message */
} bad_case;

static const bad_case bad_cases[] = {
    {"syntax_error.yaml", FFN_EPARSE, 8, 14, "syntax error"},
    {"wrong_type_cu.yaml", FFN_ESCHEMA, 8, 16, "'compute_units' must be an integer"},
    {"wrong_type_memory.yaml", FFN_ESCHEMA, 10, 9, "memory must be a mapping"},
    {"missing_source.yaml", FFN_ESCHEMA, 1, 1, "missing key 'source'"},
    {"missing_bandwidth.yaml", FFN_ESCHEMA, 11, 3, "missing key 'bandwidth'"},
    {"missing_memory.yaml", FFN_ESCHEMA, 1, 1, "missing key 'memory'"},
    {"null_peak.yaml", FFN_ESCHEMA, 5, 1, "missing key 'peak'"},
    {"empty_peak.yaml", FFN_ESCHEMA, 5, 7, "at least one dtype"},
    {"unknown_key_top.yaml", FFN_ESCHEMA, 8, 1,
     "unknown key 'compute_unit' (did you mean 'compute_units'?)"},
    {"unknown_key_memory.yaml", FFN_ESCHEMA, 12, 3,
     "unknown key 'bandwith' (did you mean 'bandwidth'?)"},
    {"unknown_key_eff.yaml", FFN_ESCHEMA, 14, 3,
     "unknown key 'compute_maxx' (did you mean 'compute_max'?)"},
    {"unknown_dtype.yaml", FFN_ESCHEMA, 7, 3, "unknown key 'fp64'"},
    {"zero_bandwidth.yaml", FFN_ERANGE, 12, 14, "'bandwidth' = 0 TB/s is out of range"},
    {"negative_capacity.yaml", FFN_ERANGE, 11, 13, "'capacity' = -16 GB is out of range"},
    {"nan_peak.yaml", FFN_ERANGE, 6, 9, "'fp32' must be a finite number"},
    {"nan_unit_peak.yaml", FFN_EPARSE, 6, 9, "not a number"},
    {"absurd_peak.yaml", FFN_ERANGE, 7, 9, "'bf16' = 1e30 FLOPS is out of range"},
    {"zero_compute_units.yaml", FFN_ERANGE, 8, 16, "'compute_units' = 0 is out of range"},
    {"unknown_unit.yaml", FFN_EPARSE, 12, 14, "unknown unit 'TB/fortnight'"},
    {"wrong_unit_kind.yaml", FFN_ESCHEMA, 12, 14, "expected bandwidth"},
    {"missing_unit.yaml", FFN_ESCHEMA, 11, 13, "needs a unit"},
    {"bad_kind.yaml", FFN_ESCHEMA, 3, 7, "'kind' must be one of gpu, cpu, accelerator"},
    {"duplicate_key.yaml", FFN_ESCHEMA, 10, 1, "duplicate key 'clock'"},
    {"empty_file.yaml", FFN_ESCHEMA, 1, 1, "empty"},
    {"too_many_tiles.yaml", FFN_ERANGE, 14, 113, "more than 12 entries"},
    {"gemm_model_unknown.yaml", FFN_ESCHEMA, 15, 15, "unknown gemm_model 'tiles'"},
    {"gemm_model_no_tiles.yaml", FFN_ESCHEMA, 14, 15, "needs the device's 'tiles'"},
    {"kernel_rule_pair.yaml", FFN_ESCHEMA, 17, 23, "tile: [rows, cols, depth]"},
    {"kernel_rule_zero_m.yaml", FFN_ERANGE, 17, 13, "'m' = 0 is out of range"},
    {"kernel_rule_two_kinds.yaml", FFN_ESCHEMA, 17, 9, "one of 'tile"},
    {"kernel_rule_waves_no_depth.yaml", FFN_ESCHEMA, 17, 17, "missing key 'depth'"},
    {"kernel_rule_best_false.yaml", FFN_ESCHEMA, 17, 23, "'best' can only be true"},
    {"kernel_rule_whole_false.yaml", FFN_ESCHEMA, 17, 24, "'whole' can only be true"},
    {"zero_tile.yaml", FFN_ERANGE, 14, 24, "'tiles rows' = 0 is out of range"},
    {"tile_not_pair.yaml", FFN_ESCHEMA, 14, 11, "pair [rows, cols]"},
    {"zero_compute_max.yaml", FFN_ERANGE, 14, 16, "'compute_max' must be greater than 0"},
    {"big_memory_max.yaml", FFN_ERANGE, 14, 15, "'memory_max' = 1.5 is out of range"},
    {"bad_overlap.yaml", FFN_ERANGE, 14, 12, "'overlap' must be 0"},
    {"too_many_levels.yaml", FFN_ERANGE, 20, 5, "more than 6 levels"},
    {"link_no_kind.yaml", FFN_ESCHEMA, 14, 3, "missing key 'kind'"},
    {"negative_latency.yaml", FFN_ERANGE, 16, 12, "'latency' = -2 us is out of range"},
    {"zero_devices.yaml", FFN_ERANGE, 16, 21, "'devices_per_node' = 0 is out of range"},
    {"bad_tdp.yaml", FFN_ERANGE, 14, 8, "'tdp' = 700 kW is out of range"},
    {"derived_map.yaml", FFN_ESCHEMA, 15, 5, "each 'derived' entry must be text"},
    {"bad_compute_max_dtype.yaml", FFN_ESCHEMA, 15, 37, "unknown key 'fp64'"},
    {"big_memory_max_gemv.yaml", FFN_ERANGE, 15, 20, "'memory_max_gemv' = 1.5 is out of range"},
    {"bad_tiles_min_rows.yaml", FFN_ERANGE, 15, 56, "'min_rows' = 0 is out of range"},
    {"tiles_by_dtype_no_tiles.yaml", FFN_ESCHEMA, 15, 26, "needs 'tiles'"},
    {"tiles_by_dtype_typo.yaml", FFN_ESCHEMA, 15, 46,
     "unknown key 'gemv_row' (did you mean 'gemv_rows'?)"},
    {"small_dequant_cost.yaml", FFN_ERANGE, 15, 24, "'int8' = 0.5 is out of range"},
    {"dequant_cost_float.yaml", FFN_ESCHEMA, 15, 27, "unknown key 'bf16'"},
    {"big_gemv_by_dtype.yaml", FFN_ERANGE, 15, 47, "'bf16' = 1.5 is out of range"},
    {"gemv_by_dtype_fp64.yaml", FFN_ESCHEMA, 15, 41, "unknown key 'fp64'"},
    {"level_max_unknown_level.yaml", FFN_ESCHEMA, 17, 24, "unknown key 'L3'"},
    {"level_max_no_onchip.yaml", FFN_ESCHEMA, 15, 3, "needs the spec's 'onchip' levels"},
    {"level_max_big.yaml", FFN_ERANGE, 17, 19, "'L2' = 1.5 is out of range"},
    {"keeps_part_not_bool.yaml", FFN_ESCHEMA, 14, 66, "'keeps_part' must be true or false"},
};

Test(hw, bad_input_points_at_the_culprit)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_case *c = &bad_cases[i];
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", BAD_DIR, c->file);
        ffn_hw hw;
        memset(&hw, 0xab, sizeof hw); /* must come back zeroed */
        ffn_diag diag;
        int rc = ffn_hw_load(path, &hw, &diag);
        char msg[1200];
        ffn_diag_format(&diag, msg, sizeof msg);
        cr_expect_eq(rc, c->err, "%s: expected %s, got %s: %s", c->file, ffn_err_name(c->err),
                     ffn_err_name(rc), msg);
        cr_expect(diag.line == c->line && diag.col == c->col, "%s: expected %d:%d, got %d:%d: %s",
                  c->file, c->line, c->col, diag.line, diag.col, msg);
        cr_expect(strstr(diag.msg, c->needle) != NULL, "%s: message '%s' lacks '%s'", c->file,
                  diag.msg, c->needle);
        cr_expect_str_eq(diag.file, path, "%s: diag names the file", c->file);
        /* the one-line form the CLI prints: file:line:col: message */
        char want[1100];
        snprintf(want, sizeof want, "%s:%d:%d: ", path, c->line, c->col);
        cr_expect(strncmp(msg, want, strlen(want)) == 0, "%s: formatted as '%s'", c->file, msg);
        cr_expect(all_zero(&hw, sizeof hw), "%s: *hw must be zeroed on error", c->file);
    }
}

Test(hw, missing_file)
{
    ffn_hw hw;
    memset(&hw, 0xab, sizeof hw);
    ffn_diag diag;
    int rc = ffn_hw_load(BAD_DIR "/no-such-device.yaml", &hw, &diag);
    cr_expect_eq(rc, FFN_EIO);
    cr_expect(strstr(diag.msg, "cannot open") != NULL, "%s", diag.msg);
    cr_expect_str_eq(diag.file, BAD_DIR "/no-such-device.yaml");
    cr_expect(all_zero(&hw, sizeof hw));
    cr_expect_eq(ffn_hw_load(NULL, &hw, &diag), FFN_EINVAL);
    cr_expect_eq(ffn_hw_load(BAD_DIR "/valid.yaml", NULL, &diag), FFN_EINVAL);
}

Test(hw, minimal_spec_gets_the_documented_defaults)
{
    ffn_hw hw;
    ffn_diag diag;
    cr_assert_eq(ffn_hw_load(BAD_DIR "/valid.yaml", &hw, &diag), 0, "%s", diag.msg);
    cr_expect_str_eq(hw.name, "bad");
    cr_expect_eq(hw.peak_flops[FFN_DT_FP32], 10e12);
    cr_expect_eq(hw.peak_flops[FFN_DT_BF16], 100e12);
    cr_expect_eq(hw.peak_flops[FFN_DT_FP8], 0.0);
    cr_expect_eq(hw.clock_hz, 1e9);
    cr_expect_eq(hw.mem_capacity_bytes, 16e9);
    cr_expect_eq(hw.mem_bandwidth_bps, 1e12);
    cr_expect_eq(hw.n_levels, 0);
    cr_expect_eq(hw.scaleup.kind[0], '\0');
    cr_expect_eq(hw.devices_per_node, 1u);
    cr_expect_eq(hw.eff.compute_max, 0.9);
    cr_expect_eq(hw.eff.memory_max, 1.0); /* default */
    cr_expect_eq(hw.eff.compute_half_flops, 0.0);
    cr_expect_eq(hw.eff.n_tiles, 1);
    cr_expect(hw.eff.tiles[0][0] == 128 && hw.eff.tiles[0][1] == 256);
    cr_expect_eq(hw.eff.launch_s, 4e-6);
    cr_expect_eq(hw.eff.overlap_p, 0.0);
    cr_expect_eq(hw.tdp_w, 300.0);
}

/* ---- the writer -------------------------------------------------------------------------- */

static void fill_awkward(ffn_hw *hw)
{
    memset(hw, 0, sizeof *hw);
    snprintf(hw->name, sizeof hw->name, "calibrated: \"host\" #1");
    snprintf(hw->vendor, sizeof hw->vendor, "Caf\xc3\xa9\\Lab");
    hw->kind = FFN_HW_CPU;
    snprintf(hw->source, sizeof hw->source,
             "measured by ffnroof calibrate on host x, 2025-01-01\n  indented: line\n\nlast");
    hw->peak_flops[FFN_DT_FP32] = 1.0 / 3.0 * 1e12; /* no short decimal form */
    hw->peak_flops[FFN_DT_BF16] = 2.039e12;
    hw->peak_flops[FFN_DT_INT8] = 123456789012345.0;
    hw->compute_units = 56;
    hw->clock_hz = 2.0e9;
    hw->mem_capacity_bytes = 141.0 * 1073741824.0;
    hw->mem_bandwidth_bps = 307.2e9;
    hw->n_levels = 2;
    snprintf(hw->levels[0].name, sizeof hw->levels[0].name, "L2");
    hw->levels[0].capacity_bytes = 112.0 * 1048576.0;
    hw->levels[0].bandwidth_bps = 0;
    hw->levels[0].scratchpad = true;
    snprintf(hw->levels[1].name, sizeof hw->levels[1].name, "L3, shared");
    hw->levels[1].capacity_bytes = 105e6;
    hw->levels[1].bandwidth_bps = 3.141592653589793e12;
    hw->levels[1].no_partial = true;
    snprintf(hw->scaleup.kind, sizeof hw->scaleup.kind, "UPI 2.0");
    hw->scaleup.bandwidth_bps = 62.4e9;
    hw->scaleup.latency_s = 1.3e-7;
    hw->devices_per_node = 2;
    snprintf(hw->scaleout.kind, sizeof hw->scaleout.kind, "Ethernet");
    hw->scaleout.bandwidth_bps = 12.5e9;
    hw->eff.compute_max = 0.8712345678901234;
    hw->eff.compute_half_flops = 3.3e9;
    hw->eff.memory_max = 0.9;
    hw->eff.memory_half_bytes = 1.5 * 1048576.0;
    hw->eff.memory_max_gemv = 0.97654321;
    hw->eff.n_tiles = 3;
    hw->eff.tiles[0][0] = 256, hw->eff.tiles[0][1] = 128;
    hw->eff.tiles[1][0] = 128, hw->eff.tiles[1][1] = 128;
    hw->eff.tiles[2][0] = 64, hw->eff.tiles[2][1] = 4096;
    hw->eff.tiles_dt[FFN_DT_BF16].n_tiles = 2;
    hw->eff.tiles_dt[FFN_DT_BF16].tiles[0][0] = 32, hw->eff.tiles_dt[FFN_DT_BF16].tiles[0][1] = 32;
    hw->eff.tiles_dt[FFN_DT_BF16].tiles[1][0] = 16, hw->eff.tiles_dt[FFN_DT_BF16].tiles[1][1] = 64;
    hw->eff.tiles_dt[FFN_DT_BF16].min_rows = 32;
    hw->eff.tiles_dt[FFN_DT_BF16].gemv_rows = 2;
    hw->eff.tiles_dt[FFN_DT_INT8].n_tiles = 1;
    hw->eff.tiles_dt[FFN_DT_INT8].tiles[0][0] = 16, hw->eff.tiles_dt[FFN_DT_INT8].tiles[0][1] = 16;
    hw->eff.launch_s = 4.7e-6;
    hw->eff.overlap_p = 2.5;
    hw->unc.dt_p10[FFN_DT_FP8] = 0.8123;
    hw->unc.dt_p90[FFN_DT_FP8] = 1.3456789;
    hw->eff.pipeline = true;
    hw->eff.block_s = 1.25e-6;
    hw->eff.fixup_s = 3.375e-6;
    ffn_kernel_rules *kr = &hw->eff.rules_dt[FFN_DT_FP8];
    kr->n = 4;
    kr->r[0] = (ffn_kernel_rule){.m_max = 16, .n_max = 1280, .tm = 16, .tn = 64, .tk = 256};
    kr->r[1] = (ffn_kernel_rule){.m_max = 64, .kind = FFN_RULE_BEST};
    kr->r[3] = (ffn_kernel_rule){.n_max = 512, .kind = FFN_RULE_WHOLE};
    kr->r[2] = (ffn_kernel_rule){.kind = FFN_RULE_WAVES,
                                 .rows = {64, 128, 256},
                                 .n_rows = 3,
                                 .col_step = 16,
                                 .col_max = 256,
                                 .tk = 128};
    hw->eff.util_gamma[FFN_DT_BF16] = hw->eff.util_gamma[FFN_DT_FP16] = 0.8123456789;
    hw->eff.util_alpha[FFN_DT_BF16] = hw->eff.util_alpha[FFN_DT_FP16] = 0.0987654321;
    hw->eff.memory_max_elem = 0.8311;
    hw->eff.dequant_cost[FFN_DT_INT8] = 2.718281828;
    hw->eff.dequant_cost[FFN_DT_INT4] = 6.0625;
    hw->eff.memory_max_gemv_dt[FFN_DT_INT4] = 0.5772156649;
    hw->eff.memory_max_gemv_dt[FFN_DT_BF16] = 0.3441234567;
    hw->eff.level_max[1] = 0.5716633034442656;
    hw->unc.p10 = 0.9123456789;
    hw->unc.p90 = 1.1034567;
    hw->unc.points = 1058;
    hw->unc.median_abs = 0.0312;
    hw->unc.max_abs = 0.187;
    hw->unc.is_default = false;
    hw->tdp_w = 350;
}

Test(hw, write_load_round_trip_is_exact)
{
    ffn_hw hw, back;
    fill_awkward(&hw);
    char out[1024];
    scratch_path(out, sizeof out, "hw.yaml");
    ffn_diag diag;
    int rc = ffn_hw_write(&hw, out, &diag);
    cr_assert_eq(rc, 0, "%s", diag.msg);
    rc = ffn_hw_load(out, &back, &diag);
    char msg[1200];
    ffn_diag_format(&diag, msg, sizeof msg);
    cr_assert_eq(rc, 0, "written file does not load: %s", msg);
    expect_same_hw(&hw, &back, "awkward");
    cr_expect(memcmp(&hw, &back, sizeof hw) == 0, "structs differ byte-wise");

    /* plain quoted strings and a one-line source take the other writer paths */
    snprintf(hw.source, sizeof hw.source, "datasheet, no newline");
    hw.eff = (ffn_eff){.compute_max = 1.0, .memory_max = 1.0}; /* defaults: block omitted */
    hw.scaleout = (ffn_link){0};
    cr_assert_eq(ffn_hw_write(&hw, out, &diag), 0, "%s", diag.msg);
    cr_assert_eq(ffn_hw_load(out, &back, &diag), 0, "%s", diag.msg);
    expect_same_hw(&hw, &back, "plain");
    FILE *f = fopen(out, "r");
    cr_assert(f);
    char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    cr_expect(strstr(text, "efficiency:") == NULL, "default efficiency should be omitted");
    cr_expect(strstr(text, "capacity: 141 GiB") != NULL, "141 GiB should be written as such:\n%s",
              text);
    cr_expect(strstr(text, "bandwidth: 307.2 GB/s") != NULL, "human units expected:\n%s", text);
    unlink(out);
    scratch_done();
}

Test(hw, write_refuses_what_would_not_load_and_leaves_the_target_alone)
{
    char out[1024];
    scratch_path(out, sizeof out, "keep.yaml");
    FILE *f = fopen(out, "w");
    cr_assert(f);
    fputs("precious\n", f);
    fclose(f);

    ffn_hw hw;
    fill_awkward(&hw);
    hw.mem_bandwidth_bps = 0; /* out of range: must not be published */
    ffn_diag diag;
    int rc = ffn_hw_write(&hw, out, &diag);
    cr_expect_eq(rc, FFN_ERANGE, "got %s: %s", ffn_err_name(rc), diag.msg);
    cr_expect(strstr(diag.msg, "would not load") != NULL, "%s", diag.msg);
    f = fopen(out, "r");
    cr_assert(f);
    char line[64] = "";
    cr_expect(fgets(line, sizeof line, f) != NULL);
    fclose(f);
    cr_expect_str_eq(line, "precious\n", "the existing file must be untouched");

    hw.mem_bandwidth_bps = 1e12;
    hw.name[0] = '\0';
    cr_expect_eq(ffn_hw_write(&hw, out, &diag), FFN_EINVAL);
    cr_expect_eq(ffn_hw_write(NULL, out, &diag), FFN_EINVAL);

    /* no temporary files left behind */
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", out);
    *strrchr(dir, '/') = '\0';
    DIR *d = opendir(dir);
    cr_assert(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        cr_expect(strstr(e->d_name, ".tmp") == NULL, "leftover %s", e->d_name);
    closedir(d);
    unlink(out);
    scratch_done();

    /* an unwritable destination is an I/O error, not a crash */
    cr_expect_eq(ffn_hw_write(&hw, "/nonexistent-dir/hw.yaml", &diag), FFN_EINVAL);
    hw.name[0] = 'x';
    cr_expect_eq(ffn_hw_write(&hw, "/nonexistent-dir/hw.yaml", &diag), FFN_EIO);
}
