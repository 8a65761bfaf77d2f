/* The project's one seeded random source: xoshiro256** (Blackman and Vigna 2018) seeded through
 * splitmix64 (Steele, Lea and Flood 2014), and splitmix64 itself for a one-word stream or a
 * counter-based fill. The same seed gives the same sequence on every host and build, so the
 * simulator's Monte-Carlo routing, the quantization lab's synthetic weights and the tests'
 * inputs are reproducible. Not for cryptography. */
#ifndef FFNROOF_RAND_H
#define FFNROOF_RAND_H

#include <stdint.h>

/* xoshiro256** state: caller-owned, filled by ffn_rng_seed; any value of it is usable. */
typedef struct ffn_rng {
    uint64_t s[4];
} ffn_rng;

/* splitmix64's finaliser: a bijective mix of one 64-bit word. The i-th splitmix64 value after
 * state s is ffn_splitmix64_mix(s + (i + 1) * FFN_SPLITMIX64_GAMMA), so a fill can be cut into
 * parts computed independently. */
#define FFN_SPLITMIX64_GAMMA 0x9e3779b97f4a7c15ull
uint64_t ffn_splitmix64_mix(uint64_t z);
/* Advance *state by FFN_SPLITMIX64_GAMMA and return the mixed new state. */
uint64_t ffn_splitmix64(uint64_t *state);

/* Seed r: its four words are the next four splitmix64 values after seed (any seed, 0 included). */
void ffn_rng_seed(ffn_rng *r, uint64_t seed);
/* The next 64 random bits. */
uint64_t ffn_rng_next(ffn_rng *r);
/* Uniform in [0, 1): the top 53 bits of ffn_rng_next times 2^-53. */
double ffn_rng_unif(ffn_rng *r);
/* Uniform in (0, 1): the top 53 bits plus one half, times 2^-53 (never 0, so log() is finite). */
double ffn_rng_unif_open(ffn_rng *r);
/* Standard normal: Box-Muller on two ffn_rng_unif_open draws, one value per call. */
double ffn_rng_normal(ffn_rng *r);

#endif
