/* The base floor's random source and order statistics (include/ffnroof/rand.h, sort.h): the
 * sequences are pinned (the simulator's Monte-Carlo routing and the quantization lab draw from
 * them, so a change would move predictions), a seed reproduces its stream, and the median and
 * quantile follow their documented definitions on odd and even counts. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "ffnroof/names.h"
#include "ffnroof/error.h"
#include "ffnroof/match.h"
#include "ffnroof/rand.h"
#include "ffnroof/sort.h"

Test(base, splitmix64_matches_the_reference_sequence)
{
    /* Steele, Lea and Flood's splitmix64 from state 0 (the published first values) */
    uint64_t x = 0;
    cr_expect_eq(ffn_splitmix64(&x), 0xe220a8397b1dcdafull);
    cr_expect_eq(ffn_splitmix64(&x), 0x6e789e6aa1b965f4ull);
    cr_expect_eq(ffn_splitmix64(&x), 0x06c45d188009454full);
    cr_expect_eq(x, 3 * FFN_SPLITMIX64_GAMMA);
    /* counter-based: the i-th value is the mix of the i-th state */
    cr_expect_eq(ffn_splitmix64_mix(2 * FFN_SPLITMIX64_GAMMA), 0x6e789e6aa1b965f4ull);
}

Test(base, xoshiro_sequence_is_pinned_and_reproducible)
{
    ffn_rng a, b;
    ffn_rng_seed(&a, 42);
    cr_expect_eq(ffn_rng_next(&a), 0x15780b2e0c2ec716ull);
    cr_expect_eq(ffn_rng_next(&a), 0x6104d9866d113a7eull);
    cr_expect_eq(ffn_rng_next(&a), 0xae17533239e499a1ull);
    ffn_rng_seed(&a, 7);
    ffn_rng_seed(&b, 7);
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(ffn_rng_next(&a), ffn_rng_next(&b), "draw %d", i);
    ffn_rng_seed(&b, 8);
    ffn_rng_seed(&a, 7);
    int same = 0;
    for (int i = 0; i < 64; i++)
        same += ffn_rng_next(&a) == ffn_rng_next(&b);
    cr_expect_eq(same, 0, "seeds 7 and 8 give different streams");
}

Test(base, uniforms_stay_in_their_intervals_and_the_normal_is_standard)
{
    ffn_rng r;
    ffn_rng_seed(&r, 1);
    double sum = 0, sum2 = 0, usum = 0;
    enum { N = 200000 };
    for (int i = 0; i < N; i++) {
        const double u = ffn_rng_unif(&r), v = ffn_rng_unif_open(&r);
        cr_assert(u >= 0.0 && u < 1.0, "%.17g", u);
        cr_assert(v > 0.0 && v < 1.0, "%.17g", v);
        usum += u;
        const double z = ffn_rng_normal(&r);
        cr_assert(isfinite(z));
        sum += z;
        sum2 += z * z;
    }
    cr_expect_float_eq(usum / N, 0.5, 0.005);
    cr_expect_float_eq(sum / N, 0.0, 0.01);
    cr_expect_float_eq(sum2 / N, 1.0, 0.02);
    /* the same seed, the same doubles */
    ffn_rng a, b;
    ffn_rng_seed(&a, 99);
    ffn_rng_seed(&b, 99);
    cr_expect_eq(ffn_rng_normal(&a), ffn_rng_normal(&b));
    cr_expect_eq(ffn_rng_unif(&a), ffn_rng_unif(&b));
}

Test(base, median_of_odd_and_even_counts)
{
    double odd[] = {5, 1, 4, 2, 3};
    cr_expect_eq(ffn_median(odd, 5), 3.0);
    cr_expect_eq(odd[0], 1.0, "sorted in place");
    cr_expect_eq(odd[4], 5.0);
    double even[] = {10, 1, 4, 2};
    cr_expect_eq(ffn_median(even, 4), 3.0, "the mean of the two middle values");
    double one[] = {7};
    cr_expect_eq(ffn_median(one, 1), 7.0);
    cr_expect(isnan(ffn_median(one, 0)));
    cr_expect(isnan(ffn_median_sorted(NULL, 3)));
}

Test(base, quantile_interpolates_between_order_statistics)
{
    const double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    cr_expect_eq(ffn_quantile_sorted(v, 11, 0.0), 1.0);
    cr_expect_eq(ffn_quantile_sorted(v, 11, -1.0), 1.0);
    cr_expect_eq(ffn_quantile_sorted(v, 11, 1.0), 11.0);
    cr_expect_eq(ffn_quantile_sorted(v, 11, 0.5), 6.0);
    cr_expect_float_eq(ffn_quantile_sorted(v, 11, 0.9), 10.0, 1e-12);
    cr_expect_float_eq(ffn_quantile_sorted(v, 11, 0.25), 3.5, 1e-12);
    /* R's quantile(c(1, 2, 4, 8), 0.9, type = 7) = 6.8 */
    const double w[] = {1, 2, 4, 8};
    cr_expect_float_eq(ffn_quantile_sorted(w, 4, 0.9), 6.8, 1e-12);
    cr_expect_float_eq(ffn_quantile_sorted(w, 4, 0.5), ffn_median_sorted(w, 4), 1e-12);
    cr_expect(isnan(ffn_quantile_sorted(w, 0, 0.5)));
}

Test(base, sorts_ascending)
{
    double d[] = {3.5, -1, 2, 2, 1e9, -1e-9};
    ffn_sort_doubles(d, 6);
    for (int i = 1; i < 6; i++)
        cr_expect_leq(d[i - 1], d[i]);
    int64_t k[] = {5, -3, 9, 0, -3};
    ffn_sort_i64(k, 5);
    cr_expect(k[0] == -3 && k[1] == -3 && k[2] == 0 && k[3] == 5 && k[4] == 9);
}

Test(base, phase_and_bound_names)
{
    cr_expect_str_eq(ffn_phase_name(FFN_PHASE_PREFILL), "prefill");
    cr_expect_str_eq(ffn_phase_name(FFN_PHASE_DECODE), "decode");
    cr_expect_str_eq(ffn_bound_name(FFN_BOUND_MEMORY), "memory");
    cr_expect_str_eq(ffn_bound_name(FFN_BOUND_COMPUTE), "compute");
    cr_expect_str_eq(ffn_bound_name(FFN_BOUND_COMM), "interconnect");
    cr_expect_str_eq(ffn_peak_name(FFN_PEAK_INT8_AMX), "int8_amx");
    cr_expect_null(ffn_peak_name(FFN_PEAK_COUNT));
    cr_expect_str_eq(ffn_bw_kernel_name(FFN_BW_TRIAD), "triad");
    cr_expect_str_eq(ffn_peer_lib_name(FFN_PEER_ONEDNN), "onednn");
}

/* Forgiving names: case, separators, a unique beginning; ambiguity and suggestions. */
Test(base, names_are_forgiving)
{
    const char *const hw[] = {"a100-sxm-80gb", "h100-pcie", "h100-sxm", "h200", "mi300x", "mi325x"};
    const char *const md[] = {"deepseek-v3", "llama3-70b", "llama3-8b", "mixtral-8x7b"};
    size_t at = 99, out[4];
    ffn_match_kind how;
    cr_assert_eq(ffn_name_match("h200", hw, 6, &at, &how), 0);
    cr_expect_eq(at, 3);
    cr_expect_eq(how, FFN_MATCH_EXACT);
    cr_assert_eq(ffn_name_match("H100-SXM", hw, 6, &at, &how), 0);
    cr_expect_eq(at, 2);
    cr_expect_eq(how, FFN_MATCH_CASE);
    cr_assert_eq(ffn_name_match("llama-3-70b", md, 4, &at, &how), 0);
    cr_expect_eq(at, 1);
    cr_expect_eq(how, FFN_MATCH_SEPARATORS);
    cr_assert_eq(ffn_name_match("DeepSeekV3", md, 4, &at, &how), 0);
    cr_expect_eq(at, 0);
    cr_assert_eq(ffn_name_match("mi300", hw, 6, &at, &how), 0);
    cr_expect_eq(at, 4);
    cr_expect_eq(how, FFN_MATCH_PREFIX);
    cr_expect_eq(ffn_name_match("h100", hw, 6, &at, &how), FFN_EINVAL); /* pcie or sxm */
    cr_expect_eq(ffn_name_begun("h100", hw, 6, out, 4), 2);
    cr_expect_eq(out[0], 1);
    cr_expect_eq(out[1], 2);
    cr_expect_eq(ffn_name_match("b200", hw, 6, &at, &how), FFN_ENOTFOUND);
    cr_expect_eq(ffn_name_match("", hw, 6, &at, &how), FFN_ENOTFOUND);
    const char *const cmds[] = {"predict", "plan", "sweep", "compare", "plot"};
    cr_assert_eq(ffn_name_suggest("predcit", cmds, 5, out, 3), 1);
    cr_expect_eq(out[0], 0);
    cr_expect_eq(ffn_name_distance("predcit", "predict"), 1); /* one swap */
    cr_expect_eq(ffn_name_distance("plan", "plot"), 2);
    cr_expect_eq(ffn_name_distance("Llama_3", "llama3"), 0);
    cr_expect_eq(ffn_name_suggest("zzzzzz", cmds, 5, out, 3), 0);
}
