/* The safetensors reader (io/load/safetensors.c): well-formed files written by tests/st_write.h
 * read back exactly (F32, F16, BF16 widened bit for bit, layers transposed into [K][N]), and
 * every kind of broken file refused with a negative code and "file: what (tensor 'NAME')",
 * never a crash or a read past the data. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ffnroof/limits.h"
#include "ffnroof/safetensors.h"
#include "st_write.h"

static char dir[256], path[320];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/ffnroof-test-st-%d", (int)getpid());
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
}

static void teardown(void)
{
    unlink(path);
    rmdir(dir);
}

TestSuite(safetensors, .init = setup, .fini = teardown, .timeout = 120);

/* The file at path must be refused with a message naming it that contains want (and, when
 * tensor is not NULL, "(tensor 'tensor')"). */
static void refused(const char *want, const char *tensor)
{
    ffn_st_file st;
    ffn_diag d;
    ffn_diag_clear(&d);
    const int rc = ffn_st_open(&st, path, &d);
    char msg[1100];
    ffn_diag_format(&d, msg, sizeof msg);
    cr_assert_lt(rc, 0, "accepted a file that should fail with '%s'", want);
    cr_expect_eq(st.fd, -1, "a refused file stays open");
    cr_expect_null(st.tensors);
    cr_expect(strncmp(msg, path, strlen(path)) == 0 && msg[strlen(path)] == ':',
              "the message does not start with the file: %s", msg);
    cr_expect(strstr(msg, want) != NULL, "'%s' not in: %s", want, msg);
    if (tensor) {
        char t[300];
        snprintf(t, sizeof t, "(tensor '%s')", tensor);
        cr_expect(strstr(msg, t) != NULL, "'%s' not in: %s", t, msg);
    }
}

static void raw(const char *header, size_t data_bytes)
{
    unsigned char *z = calloc(data_bytes ? data_bytes : 1, 1);
    st_write_raw(path, UINT64_MAX, header, z, data_bytes);
    free(z);
}

Test(safetensors, reads_names_dtypes_shapes_and_metadata)
{
    const float a[6] = {1, -2, 3.5f, 0, -0.0f, 1e-30f};
    const uint16_t b[2] = {0x3F80, 0xC000}; /* bf16 1, -2 */
    const int32_t c[1] = {7};
    const st_tensor t[] = {
        {"a", "F32", 2, {2, 3}, a, sizeof a},
        {"b", "BF16", 1, {2}, b, sizeof b},
        {"c", "I32", 0, {0}, c, sizeof c},
        {"empty", "F16", 2, {0, 5}, NULL, 0},
    };
    st_write(path, t, 4, true);
    ffn_st_file st;
    ffn_diag d;
    ffn_diag_clear(&d);
    cr_assert_eq(ffn_st_open(&st, path, &d), 0, "%s", d.msg);
    cr_assert_eq(st.n_tensors, 4u);
    const ffn_st_tensor *ta = ffn_st_find(&st, "a"), *tc = ffn_st_find(&st, "c");
    cr_assert_not_null(ta);
    cr_expect_eq(ta->dtype, FFN_ST_F32);
    cr_expect_eq(ta->ndim, 2u);
    cr_expect_eq(ta->shape[0], 2u);
    cr_expect_eq(ta->shape[1], 3u);
    cr_expect_eq(ta->elements, 6u);
    cr_expect_eq(tc->ndim, 0u, "a scalar has no dimensions");
    cr_expect_eq(tc->elements, 1u);
    cr_expect_eq(ffn_st_find(&st, "empty")->elements, 0u);
    cr_expect_null(ffn_st_find(&st, "__metadata__"), "metadata is not a tensor");
    cr_expect_null(ffn_st_find(&st, "A"));
    float out[6];
    cr_assert_eq(ffn_st_read_f32(&st, ta, out, 6, &d), 0, "%s", d.msg);
    cr_expect_eq(memcmp(out, a, sizeof a), 0, "F32 is copied bit for bit");
    cr_assert_eq(ffn_st_read_f32(&st, ffn_st_find(&st, "b"), out, 6, &d), 0);
    cr_expect(out[0] == 1.0f && out[1] == -2.0f);
    cr_expect_eq(ffn_st_read_f32(&st, ta, out, 5, &d), FFN_ENOSPACE);
    cr_expect_eq(ffn_st_read_f32(&st, tc, out, 6, &d), FFN_EUNSUPPORTED);
    cr_expect(strstr(d.msg, "I32") && strstr(d.msg, "(tensor 'c')"), "%s", d.msg);
    ffn_st_close(&st);
    cr_expect_eq(st.fd, -1);
}

Test(safetensors, widens_f16_and_bf16_exactly)
{
    /* f16: 1, -2, max normal 65504, min normal 2^-14, smallest subnormal 2^-24, a subnormal
     * 0x03FF = 1023 * 2^-24, -0, +inf, NaN; bf16: 1.5, -inf, a tiny 2^-126, NaN */
    const uint16_t h[] = {0x3C00, 0xC000, 0x7BFF, 0x0400, 0x0001, 0x03FF, 0x8000, 0x7C00, 0x7E00};
    const float hv[] = {1, -2, 65504, 0x1p-14f, 0x1p-24f, 1023 * 0x1p-24f, -0.0f, INFINITY, NAN};
    const uint16_t b[] = {0x3FC0, 0xFF80, 0x0080, 0x7FC0};
    const float bv[] = {1.5f, -INFINITY, 0x1p-126f, NAN};
    const st_tensor t[] = {{"h", "F16", 1, {9}, h, sizeof h}, {"b", "BF16", 1, {4}, b, sizeof b}};
    st_write(path, t, 2, false);
    ffn_st_file st;
    ffn_diag d;
    cr_assert_eq(ffn_st_open(&st, path, &d), 0, "%s", d.msg);
    float out[9];
    cr_assert_eq(ffn_st_read_f32(&st, ffn_st_find(&st, "h"), out, 9, &d), 0);
    for (int i = 0; i < 9; i++) {
        if (isnan(hv[i]))
            cr_expect(isnan(out[i]), "f16 %04x: NaN stays NaN", h[i]);
        else
            cr_expect(out[i] == hv[i] && signbit(out[i]) == signbit(hv[i]),
                      "f16 %04x -> %a, want %a", h[i], (double)out[i], (double)hv[i]);
    }
    cr_assert_eq(ffn_st_read_f32(&st, ffn_st_find(&st, "b"), out, 9, &d), 0);
    for (int i = 0; i < 4; i++)
        cr_expect(isnan(bv[i]) ? isnan(out[i]) : out[i] == bv[i], "bf16 %04x -> %a", b[i],
                  (double)out[i]);
    ffn_st_close(&st);
}

/* W [K][N] with values exact in fp16 and bf16: (k - 2n) / 8 */
static float *pattern(size_t K, size_t N, float off)
{
    float *w = malloc(K * N * sizeof *w);
    for (size_t k = 0; k < K; k++)
        for (size_t n = 0; n < N; n++)
            w[k * N + n] = ((float)k - 2.0f * (float)n) / 8.0f + off;
    return w;
}

static void layer_round_trip(const char *dt)
{
    const size_t d = 24, f = 40; /* f > one read block of rows is not needed: 3 tensors */
    float *wg = pattern(d, f, 0), *wu = pattern(d, f, 1), *wd = pattern(f, d, -1);
    /* layer 2 of a file that also holds layer 1 */
    char names[6][64];
    st_tensor t[6];
    void *bufs[6];
    static const char *const parts[3] = {"gate_proj", "up_proj", "down_proj"};
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < 3; i++) {
            const int j = 3 * l + i;
            snprintf(names[j], sizeof names[j], "model.layers.%d.mlp.%s.weight", l + 1, parts[i]);
            size_t bytes;
            bufs[j] = i == 0   ? st_hf_weight(wg, d, f, dt, &bytes)
                      : i == 1 ? st_hf_weight(wu, d, f, dt, &bytes)
                               : st_hf_weight(wd, f, d, dt, &bytes);
            t[j] = (st_tensor){names[j], dt, 2, {i < 2 ? f : d, i < 2 ? d : f}, bufs[j], bytes};
        }
    st_write(path, t, 6, true);
    ffn_st_file st;
    ffn_diag d0;
    cr_assert_eq(ffn_st_open(&st, path, &d0), 0, "%s", d0.msg);
    ffn_st_ffn ffn;
    cr_assert_eq(ffn_st_read_ffn(&st, 2, &ffn, &d0), 0, "%s", d0.msg);
    cr_expect_eq(ffn.d, d);
    cr_expect_eq(ffn.f, f);
    cr_expect_str_eq(ffn.prefix, "model.layers.2.mlp.");
    cr_expect_str_eq(ffn_st_dtype_name(ffn.dtype), dt);
    cr_expect_eq(memcmp(ffn.w_gate, wg, d * f * 4), 0, "%s gate transposed into [d][f]", dt);
    cr_expect_eq(memcmp(ffn.w_up, wu, d * f * 4), 0, "%s up", dt);
    cr_expect_eq(memcmp(ffn.w_down, wd, d * f * 4), 0, "%s down transposed into [f][d]", dt);
    ffn_st_ffn_free(&ffn);
    cr_expect_eq(ffn_st_read_ffn(&st, 3, &ffn, &d0), FFN_ENOTFOUND);
    cr_expect(strstr(d0.msg, "model.layers.3.mlp.gate_proj.weight") && strstr(d0.msg, "layers 1-2"),
              "%s", d0.msg);
    ffn_st_ffn_free(&ffn);
    ffn_st_close(&st);
    for (int j = 0; j < 6; j++)
        free(bufs[j]);
    free(wg);
    free(wu);
    free(wd);
}

Test(safetensors, reads_a_layer_in_f32_f16_bf16_transposed)
{
    layer_round_trip("F32");
    layer_round_trip("F16");
    layer_round_trip("BF16");
}

Test(safetensors, reads_a_layer_larger_than_one_read_block)
{
    /* 4 MiB read blocks: a [f][d] = [1100][1000] F32 weight spans two */
    const size_t d = 1000, f = 1100;
    float *wg = malloc(d * f * 4), *wu = malloc(d * f * 4), *wd = malloc(d * f * 4);
    for (size_t i = 0; i < d * f; i++) {
        wg[i] = (float)i;
        wu[i] = -(float)i;
        wd[i] = (float)(i % 977);
    }
    st_write_layer(path, 0, wg, wu, wd, d, f, "F32");
    ffn_st_file st;
    ffn_diag dg;
    cr_assert_eq(ffn_st_open(&st, path, &dg), 0, "%s", dg.msg);
    ffn_st_ffn ffn;
    cr_assert_eq(ffn_st_read_ffn(&st, 0, &ffn, &dg), 0, "%s", dg.msg);
    cr_expect_eq(memcmp(ffn.w_gate, wg, d * f * 4), 0);
    cr_expect_eq(memcmp(ffn.w_up, wu, d * f * 4), 0);
    cr_expect_eq(memcmp(ffn.w_down, wd, d * f * 4), 0);
    ffn_st_ffn_free(&ffn);
    ffn_st_close(&st);
    free(wg);
    free(wu);
    free(wd);
}

Test(safetensors, accepts_any_header_order_and_an_empty_file_of_tensors)
{
    /* header order is not offset order; spaces pad the header */
    raw("{\"b\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[4,7]},"
        "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}     ",
        7);
    ffn_st_file st;
    ffn_diag d;
    cr_assert_eq(ffn_st_open(&st, path, &d), 0, "%s", d.msg);
    cr_expect_str_eq(st.tensors[0].name, "b");
    ffn_st_close(&st);
    raw("{}      ", 0);
    cr_assert_eq(ffn_st_open(&st, path, &d), 0, "%s", d.msg);
    cr_expect_eq(st.n_tensors, 0u);
    ffn_st_close(&st);
    /* metadata null is allowed (the reference reader's Option) */
    raw("{\"__metadata__\":null}", 0);
    cr_assert_eq(ffn_st_open(&st, path, &d), 0, "%s", d.msg);
    ffn_st_close(&st);
}

/* 5000 tensors on one 400 kB line, the last with a name of name_len characters */
static void long_header(size_t name_len)
{
    const int n = 5000;
    size_t cap = (size_t)n * 80 + 4000, len = 0;
    char *h = malloc(cap);
    len += (size_t)snprintf(h, cap, "{");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(h + len, cap - len,
                                "%s\"model.layers.%d.w\":{\"dtype\":\"U8\",\"shape\":[1],"
                                "\"data_offsets\":[%d,%d]}",
                                i ? "," : "", i, i, i + 1);
    len += (size_t)snprintf(h + len, cap - len, ",\"");
    for (size_t i = 0; i < name_len; i++)
        h[len++] = 'x';
    len +=
        (size_t)snprintf(h + len, cap - len,
                         "\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[%d,%d]}}", n, n + 1);
    raw(h, (size_t)n + 1);
    free(h);
}

Test(safetensors, long_single_line_headers_load)
{
    long_header(1000);
    ffn_st_file st;
    ffn_diag d;
    cr_assert_eq(ffn_st_open(&st, path, &d), 0, "%s", d.msg);
    cr_expect_eq(st.n_tensors, 5001u);
    cr_expect_eq(strlen(st.tensors[5000].name), 1000u);
    ffn_st_close(&st);
    /* libyaml ends a mapping key within 1024 characters: a longer name is refused by name,
     * not as a syntax error somewhere after it */
    long_header(3000);
    refused("a name of 3000 characters", NULL);
}

Test(safetensors, json_whitespace_loads)
{
    raw("{\n\t\"a\":\t{\"dtype\": \"U8\",\r\n \"shape\": [ 2 ], \"data_offsets\": [0, 2]}\n}\n", 2);
    ffn_st_file st;
    ffn_diag d;
    cr_expect_eq(ffn_st_open(&st, path, &d), 0, "%s", d.msg);
    ffn_st_close(&st);
}

Test(safetensors, refuses_files_too_short_for_a_header)
{
    raw("", 0); /* 8 bytes: a length of 0 */
    refused("the header length is 0", NULL);
    FILE *fp = fopen(path, "wb");
    fclose(fp);
    refused("the file is empty", NULL);
    fp = fopen(path, "wb");
    fputs("{\"a\"", fp);
    fclose(fp);
    refused("shorter than the 8-byte header length", NULL);
}

Test(safetensors, refuses_a_header_longer_than_the_file)
{
    st_write_raw(path, 1000, "{}", NULL, 0);
    refused("the header length, 1000 bytes, runs past the end of the file (10 bytes)", NULL);
    st_write_raw(path, UINT64_MAX - 3, "{}", NULL, 0);
    refused("runs past the end of the file", NULL);
}

Test(safetensors, refuses_a_header_beyond_the_input_limit)
{
    /* a sparse file: the limit is checked before the header is read */
    const uint64_t n = (uint64_t)FFN_MAX_INPUT_BYTES + 1;
    st_write_raw(path, n, "{", NULL, 0);
    cr_assert_eq(truncate(path, (off_t)(n + 64)), 0);
    refused("larger than the limit of 64 MiB", NULL);
}

Test(safetensors, refuses_what_is_not_a_json_object)
{
    raw("[1, 2]", 0);
    refused("does not start with '{'", NULL);
    raw("\x89PNG\r\n", 0);
    refused("does not start with '{' (byte 8 is 0x89)", NULL);
    raw("{\"a\": {\"dtype\": \"F32\",, }", 0);
    refused("JSON header, line 1, column", NULL);
    raw("{\"a\": 1, \"a\": 2}", 0);
    refused("duplicate key 'a'", NULL);
    raw("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}\x01", 4);
    refused("JSON header", NULL);
    /* a NUL byte inside the header */
    const char nul[] = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}} ";
    FILE *fp = fopen(path, "wb");
    const unsigned char len8[8] = {sizeof nul - 1};
    fwrite(len8, 1, 8, fp);
    fwrite(nul, 1, sizeof nul - 2, fp);
    fputc(0, fp);
    fwrite("\0\0\0\0", 1, 4, fp);
    fclose(fp);
    refused("JSON header", NULL);
}

Test(safetensors, refuses_bad_tensor_entries_naming_the_tensor)
{
    raw("{\"w\": 5}", 0);
    refused("a tensor entry must be a mapping", "w");
    raw("{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4);
    refused("missing key 'dtype'", "w");
    raw("{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4);
    refused("no 'shape'", "w");
    raw("{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4);
    refused("no 'data_offsets'", "w");
    raw("{\"w\":{\"dtype\":\"F32\",\"shape\":4,\"data_offsets\":[0,4]}}", 4);
    refused("'shape' must be a list", "w");
    raw("{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4);
    refused("must not be negative", "w");
    raw("{\"w\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4);
    refused("must be an integer", "w");
    raw("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 4);
    refused("'data_offsets' must be two numbers", "w");
    raw("{\"w\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"
        "\"data_offsets\":[0,4]}}",
        4);
    refused("a shape of 17 dimensions", "w");
}

Test(safetensors, refuses_unknown_dtypes)
{
    raw("{\"w\":{\"dtype\":\"F31\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4);
    refused("unknown dtype 'F31'", "w");
    raw("{\"w\":{\"dtype\":\"float32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4);
    refused("unknown dtype 'float32'", "w");
}

Test(safetensors, refuses_sizes_that_disagree_with_the_shape)
{
    raw("{\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,20]}}", 20);
    refused("shape [2, 3] of F32 needs 24 bytes but data_offsets [0, 20] hold 20", "w");
    raw("{\"w\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]}}", 2);
    refused("not a whole number of bytes", "w");
    /* 2^32 * 2^32 elements */
    raw("{\"w\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,1]}}", 1);
    refused("overflows 64 bits", "w");
    /* elements fit, bits do not */
    raw("{\"w\":{\"dtype\":\"F64\",\"shape\":[4294967296,268435456],\"data_offsets\":[0,1]}}", 1);
    refused("overflows 64 bits", "w");
}

Test(safetensors, refuses_offsets_out_of_range_or_backwards)
{
    raw("{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 12);
    refused("run past the end of the file (its data section holds 12 bytes: truncated?)", "w");
    raw("{\"w\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[18446744073709551611,"
        "18446744073709551615]}}",
        4);
    refused("run past the end of the file", "w");
    raw("{\"w\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[8,4]}}", 8);
    refused("end before they begin", "w");
    raw("{\"w\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,18446744073709551616]}}", 8);
    refused("out of range", "w");
}

Test(safetensors, refuses_truncated_data)
{
    const float a[8] = {0};
    const st_tensor t[] = {{"a", "F32", 1, {4}, a, 16}, {"b", "F32", 1, {4}, a + 4, 16}};
    st_write(path, t, 2, false);
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    cr_assert_eq(truncate(path, sb.st_size - 3), 0);
    refused("run past the end of the file", "b");
}

Test(safetensors, refuses_overlaps_holes_and_trailing_bytes)
{
    raw("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
        "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[2,6]}}",
        6);
    refused("data_offsets [2, 6] overlap those of tensor 'a' [0, 4]", "b");
    raw("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
        "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}",
        4);
    refused("overlap", NULL);
    raw("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
        "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[6,10]}}",
        10);
    refused("bytes 4..6 of the data belong to no tensor", "b");
    raw("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 9);
    refused("5 bytes after the last tensor", NULL);
    raw("{}", 3);
    refused("lists no tensor but 3 bytes of data follow", NULL);
}

Test(safetensors, refuses_a_directory_and_a_missing_file)
{
    ffn_st_file st;
    ffn_diag d;
    cr_expect_eq(ffn_st_open(&st, dir, &d), FFN_EIO);
    cr_expect(strstr(d.msg, "is a directory"), "%s", d.msg);
    cr_expect_eq(ffn_st_open(&st, "/nonexistent/x.safetensors", &d), FFN_EIO);
    cr_expect_eq(ffn_st_open(&st, NULL, &d), FFN_EINVAL);
    cr_expect_eq(ffn_st_open(&st, "/dev/null", &d), FFN_EIO);
    cr_expect(strstr(d.msg, "not a regular file"), "%s", d.msg);
}

/* A layer file whose tensors are given by header text (data zero). */
static void layer_refused(const char *header, size_t bytes, unsigned layer, int want_rc,
                          const char *want, const char *tensor)
{
    raw(header, bytes);
    ffn_st_file st;
    ffn_diag d;
    cr_assert_eq(ffn_st_open(&st, path, &d), 0, "%s", d.msg);
    ffn_st_ffn ffn;
    cr_expect_eq(ffn_st_read_ffn(&st, layer, &ffn, &d), want_rc, "%s", d.msg);
    char msg[1100];
    ffn_diag_format(&d, msg, sizeof msg);
    cr_expect(strstr(msg, path) && strstr(msg, want), "'%s' not in: %s", want, msg);
    if (tensor) {
        char t[300];
        snprintf(t, sizeof t, "(tensor '%s')", tensor);
        cr_expect(strstr(msg, t) != NULL, "'%s' not in: %s", t, msg);
    }
    ffn_st_ffn_free(&ffn);
    ffn_st_close(&st);
}

#define G "model.layers.0.mlp.gate_proj.weight"
#define U "model.layers.0.mlp.up_proj.weight"
#define D "model.layers.0.mlp.down_proj.weight"
#define E(name, dt, shape, b, e)                                                                   \
    "\"" name "\":{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":[" b "," e "]}"

Test(safetensors, refuses_layers_whose_shapes_or_dtypes_do_not_fit)
{
    layer_refused("{" E(G, "F32", "[8,4]", "0", "128") "}", 128, 1, FFN_ENOTFOUND,
                  "no tensor 'model.layers.1.mlp.gate_proj.weight'", NULL);
    layer_refused("{" E("x", "F32", "[8,4]", "0", "128") "}", 128, 0, FFN_ENOTFOUND,
                  "the file holds no", NULL);
    layer_refused("{" E(G, "F32", "[8,4]", "0", "128") "," E(U, "F32", "[8,4]", "128", "256") "}",
                  256, 0, FFN_ENOTFOUND, "no tensor '" D "'", NULL);
    layer_refused("{" E(G, "F32", "[8,4]", "0", "128") "," E(U, "F32", "[4,8]", "128", "256") "," E(
                      D, "F32", "[4,8]", "256", "384") "}",
                  384, 0, FFN_ESCHEMA, "up_proj is [4, 8] but gate_proj is [8, 4]", U);
    layer_refused("{" E(G, "F32", "[8,4]", "0", "128") "," E(U, "F32", "[8,4]", "128", "256") "," E(
                      D, "F32", "[8,4]", "256", "384") "}",
                  384, 0, FFN_ESCHEMA, "down_proj must be [4, 8]", D);
    layer_refused("{" E(G, "F32", "[2,4,4]", "0", "128") "," E(
                      U, "F32", "[8,4]", "128", "256") "," E(D, "F32", "[4,8]", "256", "384") "}",
                  384, 0, FFN_ESCHEMA, "must be a non-empty matrix", G);
    layer_refused("{" E(G, "I8", "[8,4]", "0", "32") "," E(U, "F32", "[8,4]", "32", "160") "," E(
                      D, "F32", "[4,8]", "160", "288") "}",
                  288, 0, FFN_EUNSUPPORTED, "dtype I8 cannot be read as weights", G);
}

Test(safetensors, the_fuzz_seeds_load_or_are_refused_as_named)
{
    /* tests/data/safetensors/: the good ones load (and their layer 0 reads), bad-* do not */
    static const char *const good[] = {"layer0-f32", "layer0-bf16", "layer0-f16", "mixed-dtypes",
                                       "empty"};
    static const char *const bad[] = {"bad-overlap", "bad-truncated", "bad-size"};
    char p[512];
    ffn_st_file st;
    ffn_diag d;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        snprintf(p, sizeof p, "%s/safetensors/%s.safetensors", FFNROOF_TEST_DATA, good[i]);
        cr_assert_eq(ffn_st_open(&st, p, &d), 0, "%s: %s", good[i], d.msg);
        if (!strncmp(good[i], "layer0", 6)) {
            ffn_st_ffn ffn;
            cr_expect_eq(ffn_st_read_ffn(&st, 0, &ffn, &d), 0, "%s", d.msg);
            cr_expect(ffn.d == 4 && ffn.f == 8);
            /* gate_proj[n][k] = ((n*4 + k) % 5 - 2) / 4, here at [k][n] */
            cr_expect_eq(ffn.w_gate[1 * 8 + 2], (float)((2 * 4 + 1) % 5 - 2) / 4);
            ffn_st_ffn_free(&ffn);
        }
        ffn_st_close(&st);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(p, sizeof p, "%s/safetensors/%s.safetensors", FFNROOF_TEST_DATA, bad[i]);
        cr_expect_lt(ffn_st_open(&st, p, &d), 0, "%s loaded", bad[i]);
    }
}
