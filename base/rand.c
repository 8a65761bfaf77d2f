/* The seeded random source (include/ffnroof/rand.h): splitmix64 and xoshiro256**. The
 * sequences are part of the project's outputs (the simulator's Monte-Carlo routing draws from
 * them), so a change here changes predictions: test_base pins the first values. */
#include "ffnroof/rand.h"

#include <math.h>

uint64_t ffn_splitmix64_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t ffn_splitmix64(uint64_t *state)
{
    return ffn_splitmix64_mix(*state += FFN_SPLITMIX64_GAMMA);
}

void ffn_rng_seed(ffn_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = ffn_splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t ffn_rng_next(ffn_rng *r)
{
    uint64_t *s = r->s;
    const uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double ffn_rng_unif(ffn_rng *r)
{
    return (double)(ffn_rng_next(r) >> 11) * 0x1.0p-53;
}

double ffn_rng_unif_open(ffn_rng *r)
{
    return ((double)(ffn_rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

double ffn_rng_normal(ffn_rng *r)
{
    const double u = ffn_rng_unif_open(r), v = ffn_rng_unif_open(r);
    return sqrt(-2.0 * log(u)) * cos(2.0 * 3.14159265358979323846 * v);
}
