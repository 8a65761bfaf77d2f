/* The serving steady state (include/ffnroof/serve.h, docs/plan.md "Serving"): the engine's
 * scheduler simulated step by step over a stream of requests, the measured window kept clear of
 * the start-up and the drain. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ffnroof/rand.h"
#include "ffnroof/serve.h"
#include "ffnroof/sort.h"

const char *ffn_serve_mode_name(ffn_serve_mode m)
{
    static const char *const n[] = {"concurrency", "rate", "offline"};
    return (unsigned)m < 3 ? n[m] : "?";
}

const char *ffn_serve_bound_name(ffn_serve_bound b)
{
    static const char *const n[] = {"gemm",     "attention", "interconnect", "engine-overhead",
                                    "kv-cache", "max-seqs",  "clients"};
    return (unsigned)b < FFN_SBN_COUNT ? n[b] : "?";
}

void ffn_serve_opts_default(ffn_serve_opts *o)
{
    memset(o, 0, sizeof *o);
    o->shape = (ffn_plan_shape){1, 1, 1, 1};
    o->mode = FFN_SERVE_CONCURRENCY;
    o->concurrency = 1;
    o->isl = 1024;
    o->osl = 256;
    o->seed = 1;
    o->spec_accept = 1;
    o->step_scale = 1;
}

typedef struct req {
    double arrive, first, done;
    uint32_t isl, osl;
    uint32_t ctx0;       /* tokens its prefill computes: the prompt, or after a preemption the
                            prompt and what it had generated (recomputed) */
    uint32_t prefilled;  /* of ctx0, computed */
    uint32_t in_counted; /* prompt tokens counted as the workload's input */
    double generated;    /* output tokens emitted */
    double kv_tok;       /* tokens in its KV cache */
    uint64_t kv;         /* KV tokens held: pages */
    /* after a preemption under a prefix cache: the tokens of its freed pages still cached, and
     * the allocation count at which the cache starts evicting them (ffn_serve_run) */
    double cached, evict_at;
    /* in the step being built: it decodes, or the prompt tokens of its chunk */
    bool decodes;
    uint32_t chunk;
} req;

typedef struct stepr {
    double t0, t1;
    double out_tokens, in_tokens;
    double running, in_system, waiting, ctx_mean;
    double parts[4];       /* gemm (without comm), attention + LM head + draft, comm, overhead */
    unsigned char blocked; /* 1 KV, 2 max_seqs: the queue's head could not enter */
} stepr;

static uint32_t draw_len(ffn_rng *g, uint64_t mean, double spread)
{
    if (!(spread > 0)) return (uint32_t)mean;
    double lo = (double)mean * (1.0 - spread), hi = (double)mean * (1.0 + spread);
    double v = floor(lo + (hi - lo + 1.0) * ffn_rng_unif(g));
    if (v < 1) v = 1;
    if (v > hi) v = floor(hi);
    return (uint32_t)v;
}

/* Whole-token lengths v = 1 + floor(X), X exponential of scale m, kept to v <= c: q = e^(-1/m)
 * and P(v = k) = q^(k-1) (1 - q) / (1 - q^c), whose mean is 1/(1 - q) - c q^c / (1 - q^c). */
static double trunc_geo_mean(double m, double c)
{
    const double q = exp(-1.0 / m), qc = pow(q, c);
    return 1.0 / (1.0 - q) - c * qc / (1.0 - qc);
}

/* the scale whose lengths kept to c have the mean asked for (which must be below (c + 1) / 2,
 * the mean of a flat law on 1..c) */
static double trunc_geo_scale(double mean, double c)
{
    double lo = 1e-3, hi = 1e3 * c;
    for (int i = 0; i < 200; i++) {
        const double mid = sqrt(lo * hi);
        if (trunc_geo_mean(mid, c) < mean)
            lo = mid;
        else
            hi = mid;
    }
    return sqrt(lo * hi);
}

/* one length of that law, by inversion */
static uint32_t draw_trunc_geo(ffn_rng *g, double m, double c)
{
    const double q = exp(-1.0 / m), qc = pow(q, c);
    double k = 1.0 + floor(log(1.0 - ffn_rng_unif(g) * (1.0 - qc)) / log(q));
    if (k < 1) k = 1;
    if (k > c) k = c;
    return (uint32_t)k;
}

bool ffn_serve_sharegpt_means_fit(uint64_t isl, uint64_t osl, double *max_isl, double *max_osl)
{
    const double mi = 0.45 * FFN_SHAREGPT_MAX_PROMPT,
                 mo = 0.45 * (FFN_SHAREGPT_MAX_TOTAL - fmin((double)isl, FFN_SHAREGPT_MAX_PROMPT));
    if (max_isl) *max_isl = mi;
    if (max_osl) *max_osl = mo;
    return (double)isl < mi && (double)osl < mo;
}

uint64_t ffn_serve_budget(const ffn_serve_opts *o, uint64_t dp)
{
    const uint64_t b = o->sched.max_batched_tokens;
    if (!o->sched.budget_over_dp) return b * dp;
    return b > dp ? b : dp;
}

double ffn_serve_max_request_tokens(const ffn_serve_opts *o)
{
    if (o->sharegpt_lengths) return FFN_SHAREGPT_MAX_TOTAL;
    return floor((double)o->isl * (1 + o->isl_spread)) +
           floor((double)o->osl * (1 + o->osl_spread));
}

static uint64_t pages(uint64_t tokens, uint64_t page)
{
    return page > 1 ? (tokens + page - 1) / page * page : tokens;
}

static int check_opts(const ffn_serve_ctx *c, const ffn_serve_opts *o, ffn_diag *diag)
{
    if (o->isl < 1 || o->osl < 1 || o->isl > (1u << 30) || o->osl > (1u << 30))
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "input and output lengths must be in [1, 2^30] tokens");
    if (!(o->isl_spread >= 0 && o->isl_spread < 1) || !(o->osl_spread >= 0 && o->osl_spread < 1))
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "a length spread must be in [0, 1): lengths are drawn in mean x "
                            "[1 - s, 1 + s]");
    if (o->mode == FFN_SERVE_CONCURRENCY && !(o->concurrency >= 1 && o->concurrency <= 1e6))
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "the concurrency must be in [1, 1e6]");
    if (o->mode == FFN_SERVE_RATE && !(o->rate > 0 && o->rate < 1e9))
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "the request rate must be > 0 /s");
    if (o->spec_tokens > 16 || !(o->spec_accept >= 1 && o->spec_accept <= o->spec_tokens + 1.0))
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "speculation: at most 16 draft tokens, and a step emits between 1 "
                            "and draft tokens + 1 tokens");
    if (!o->sched.max_batched_tokens || !o->sched.max_seqs || !(o->sched.step_overhead_s >= 0))
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "the scheduler needs a token budget and a sequence cap >= 1");
    const uint64_t q = 1 + (uint64_t)o->spec_tokens;
    if (o->sched.max_batched_tokens < q)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "a token budget of %llu cannot hold one decode step of %llu tokens",
                            (unsigned long long)o->sched.max_batched_tokens, (unsigned long long)q);
    if (o->sharegpt_lengths && (o->isl_spread > 0 || o->osl_spread > 0))
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "ShareGPT-like lengths have their own law: no spread with them");
    double max_isl, max_osl;
    if (o->sharegpt_lengths && !ffn_serve_sharegpt_means_fit(o->isl, o->osl, &max_isl, &max_osl))
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "ShareGPT-like lengths keep prompts to %d tokens and requests to %d: "
                            "means of at most %.0f and %.0f",
                            FFN_SHAREGPT_MAX_PROMPT, FFN_SHAREGPT_MAX_TOTAL, ceil(max_isl) - 1,
                            ceil(max_osl) - 1);
    const double longest = ffn_serve_max_request_tokens(o);
    const double need = (double)pages((uint64_t)longest, o->sched.page_tokens);
    if (!c->fits || need > c->kv_tokens)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "a request of up to %.0f tokens does not fit: the replica's KV cache "
                            "holds %.0f tokens after the weights (%.4g GB/device)",
                            longest, c->kv_tokens, c->weight_bytes / 1e9);
    if (c->max_tokens < ffn_serve_budget(o, c->shape.dp) + o->sched.max_seqs * q * c->shape.dp)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                            "the replica was priced for steps of %llu tokens at most",
                            (unsigned long long)c->max_tokens);
    return 0;
}

static uint64_t default_requests(const ffn_serve_opts *o)
{
    if (o->requests) return o->requests;
    if (o->mode == FFN_SERVE_CONCURRENCY) {
        double n = 10.0 * o->concurrency;
        return n < 200 ? 200 : n > 20000 ? 20000 : (uint64_t)n;
    }
    return 1000; /* vLLM's benchmark_throughput default --num-prompts */
}

/* Append a step record, growing the array; false when out of memory. */
static bool push_step(stepr **steps, size_t *n, size_t *cap, stepr s)
{
    if (*n == *cap) {
        stepr *s2 = realloc(*steps, 2 * *cap * sizeof **steps);
        if (!s2) return false;
        *steps = s2;
        *cap *= 2;
    }
    (*steps)[(*n)++] = s;
    return true;
}

/* The KV pages request x needs for the next decode step's q tokens (0 while in prefill). */
static double growth(const req *x, uint64_t q, uint64_t page)
{
    if (x->prefilled != x->ctx0) return 0;
    const uint64_t tok = (uint64_t)ceil(x->kv_tok) + q;
    return tok > x->kv ? (double)(pages(tok, page) - x->kv) : 0.0; /* a new page, or none */
}

/* Every running sequence whose prompt is done decodes q tokens while the budget lasts, oldest
 * first; counts them in b. */
static void add_decodes(req *rq, const uint32_t *run, size_t n_run, uint64_t q, uint64_t *budget,
                        ffn_serve_batch *b)
{
    for (size_t i = 0; i < n_run; i++) {
        req *x = &rq[run[i]];
        x->decodes = x->prefilled == x->ctx0 && *budget >= q;
        if (x->decodes) {
            b->decode_seqs++;
            b->decode_ctx += (double)x->isl + x->generated;
            *budget -= q;
        }
    }
    b->logits = b->decode_seqs;
}

/* The prompt chunk request x gets of what the budget leaves, at most cap tokens (its DP rank's
 * share of a shared budget). */
static uint64_t chunk_of(const req *x, uint64_t budget, uint64_t cap)
{
    const uint64_t left = x->ctx0 - x->prefilled, most = budget < cap ? budget : cap;
    return left < most ? left : most;
}

/* Give request x a prompt chunk of what the budget leaves; counts it in b. */
static void take_chunk(req *x, uint64_t *budget, uint64_t cap, ffn_serve_batch *b)
{
    const uint64_t ch = chunk_of(x, *budget, cap);
    x->chunk = (uint32_t)ch;
    b->prefill_seqs++;
    b->prefill_tokens += ch;
    b->prefill_pairs += (double)ch * ((double)x->prefilled + ((double)ch + 1.0) / 2.0);
    b->prefill_prefix += (double)x->prefilled;
    if (x->prefilled + ch == x->ctx0) b->logits++; /* a token comes out of this step */
    *budget -= ch;
}

/* The scheduler's state a preemption changes (the run loop's own variables). */
typedef struct sched_state {
    req *rq;
    uint32_t *run, *pre;
    size_t *n_run, *n_pre;
    double *kv_free; /* KV pages free */
    double *alloc;   /* KV tokens taken from the free pages so far */
    bool prefix_cache;
    double *rem;  /* output tokens the running sequences have still to produce */
    double *need; /* KV pages the running sequences' next decode adds */
} sched_state;

/* Preempt the newest running sequence: its cache freed, its prompt and output so far to be
 * recomputed when it re-enters (first among the waiting); a decode already counted in the step
 * being built (b) is taken back out. */
static void preempt_newest(const sched_state *s, uint64_t q, uint64_t page, ffn_serve_batch *b,
                           uint64_t *budget, ffn_serve_result *r)
{
    req *v = &s->rq[s->run[--*s->n_run]];
    *s->need -= growth(v, q, page);
    *s->rem -= (double)v->osl - v->generated;
    /* under a prefix cache its full pages stay cached behind every page free now: the
     * allocator takes those first, then this sequence's, its last pages first (vLLM's block
     * pool frees a request's blocks in reverse order to the back of its LRU free queue) */
    const double computed = v->prefilled < v->ctx0 ? (double)v->prefilled : v->kv_tok;
    v->cached =
        s->prefix_cache ? floor(fmin(computed, (double)v->kv) / (double)page) * (double)page : 0;
    v->evict_at = *s->alloc + *s->kv_free;
    *s->kv_free += (double)v->kv;
    if (v->decodes) {
        b->decode_seqs--;
        b->decode_ctx -= (double)v->isl + v->generated;
        b->logits--;
        *budget += q;
        v->decodes = false;
    }
    v->kv = 0;
    v->kv_tok = 0;
    v->ctx0 = v->isl + (uint32_t)floor(v->generated + 1e-9);
    v->prefilled = 0;
    s->pre[(*s->n_pre)++] = s->run[*s->n_run];
    r->preemptions++;
}

int ffn_serve_run(ffn_serve_ctx *c, const ffn_serve_opts *o, ffn_serve_result *r, ffn_diag *diag)
{
    memset(r, 0, sizeof *r);
    int rc = check_opts(c, o, diag);
    if (rc) return rc;
    const uint64_t N = default_requests(o);
    if (N < 10 || N > 1000000)
        return ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0, "simulate between 10 and 1e6 requests");
    const uint64_t q = 1 + (uint64_t)o->spec_tokens;
    /* each attention-DP rank is an engine of its own, with its own sequence cap and (vLLM) its
     * own budget, or (SGLang) its share of the replica's (ffn_serve_budget); the replica
     * schedules their sum */
    const uint64_t budget0 = ffn_serve_budget(o, c->shape.dp);
    /* a prompt lives on one DP rank: under a shared budget its chunk is at most the rank's share */
    const uint64_t cap = o->sched.budget_over_dp && c->shape.dp > 1
                             ? (budget0 / c->shape.dp ? budget0 / c->shape.dp : 1)
                             : UINT64_MAX;
    const uint64_t seq_cap = o->sched.max_seqs * c->shape.dp;
    req *rq = calloc(N, sizeof *rq);
    uint32_t *run = malloc(N * sizeof *run);
    uint32_t *pre = malloc(N * sizeof *pre);
    size_t cap_steps = 1 << 14, n_steps = 0;
    stepr *steps = malloc(cap_steps * sizeof *steps);
    double *tmp = malloc(N * sizeof *tmp);
    if (!rq || !run || !pre || !steps || !tmp) {
        rc = ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    ffn_rng g;
    ffn_rng_seed(&g, o->seed);
    double t_arr = 0;
    /* ShareGPT-like: a prompt below its limit, then an output below the request's limit less
     * the prompt; the output's scale is solved at the mean prompt's room */
    const double sg_in = o->sharegpt_lengths
                             ? trunc_geo_scale((double)o->isl, FFN_SHAREGPT_MAX_PROMPT)
                             : 0,
                 sg_out =
                     o->sharegpt_lengths
                         ? trunc_geo_scale((double)o->osl, FFN_SHAREGPT_MAX_TOTAL - (double)o->isl)
                         : 0;
    for (uint64_t i = 0; i < N; i++) {
        if (o->sharegpt_lengths) {
            rq[i].isl = draw_trunc_geo(&g, sg_in, FFN_SHAREGPT_MAX_PROMPT);
            rq[i].osl = draw_trunc_geo(&g, sg_out, FFN_SHAREGPT_MAX_TOTAL - (double)rq[i].isl);
        } else {
            rq[i].isl = draw_len(&g, o->isl, o->isl_spread);
            rq[i].osl = draw_len(&g, o->osl, o->osl_spread);
        }
        rq[i].ctx0 = rq[i].isl;
        rq[i].first = rq[i].done = NAN;
        if (o->mode == FFN_SERVE_RATE) {
            t_arr += -log(ffn_rng_unif_open(&g)) / o->rate;
            rq[i].arrive = t_arr;
        } else {
            rq[i].arrive = o->mode == FFN_SERVE_OFFLINE ? 0 : INFINITY;
        }
    }
    uint64_t released = N; /* requests whose arrival time is set */
    if (o->mode == FFN_SERVE_CONCURRENCY) {
        released = (uint64_t)o->concurrency < N ? (uint64_t)o->concurrency : N;
        for (uint64_t i = 0; i < released; i++)
            rq[i].arrive = 0;
    }
    double kv_free = c->kv_tokens, t = 0, alloc = 0;
    uint64_t next = 0, done = 0, arrived = 0; /* next: the oldest request not yet admitted */
    size_t n_run = 0, n_pre = 0;              /* pre: preempted, the last on top */
    const ffn_engine_sched *sc = &o->sched;
    const bool grow = sc->kv_grow;
    const bool by_chunk = grow && sc->kv_by_chunk;
    double share = grow ? sc->reserve_output : 1.0; /* of the output held at admission */
    double rem = 0;  /* output tokens the running sequences have still to produce */
    double need = 0; /* KV pages the running sequences' next decode adds */
    const double decay =
        grow && sc->reserve_decay_steps > 0
            ? (sc->reserve_output - sc->reserve_output_min) / sc->reserve_decay_steps
            : 0;
    const sched_state ss = {rq,   run,  pre, &n_run, &n_pre, &kv_free, &alloc, sc->prefix_cache,
                            &rem, &need};
    while (done < N) {
        ffn_serve_batch b = {0};
        uint64_t budget = budget0;
        /* room in the cache for the decodes' new tokens: the newest running sequences are
         * preempted until there is (their cache freed, their prompt and output recomputed
         * when they re-enter); no request enters in a step that preempts (vLLM's rule) */
        bool preempting = false;
        if (grow) {
            while (need > kv_free && n_run > 1) {
                preempt_newest(&ss, q, sc->page_tokens, &b, &budget, r);
                preempting = true;
            }
            if (preempting && decay > 0) { /* the share the running sequences' progress suggests */
                double dec = 0, max = 0;
                for (size_t i = 0; i < n_run; i++)
                    dec += rq[run[i]].generated, max += rq[run[i]].osl;
                share = max > 0 ? fmin(1.0, (dec + sc->reserve_retract_steps * (double)n_run) / max)
                                : sc->reserve_output;
            }
        }
        /* what the running sequences hold on to beyond their cache: their share of the output
         * still to come */
        double claim = grow ? share * rem : 0;
        /* prompts: the running prompts' chunks, then new (or preempted) requests while the cache
         * holds them; decodes before them, or (prefill apart) only when no prompt runs */
        if (!sc->prefill_apart) add_decodes(rq, run, n_run, q, &budget, &b);
        for (size_t i = 0; i < n_run && budget; i++) {
            req *x = &rq[run[i]];
            if (x->prefilled >= x->ctx0) continue;
            if (by_chunk) {
                /* the chunk's pages, found by preempting the newest sequences; when none newer
                 * is left the prompt itself waits, preempted (vLLM's V1 scheduler) */
                const double extra =
                    (double)pages(x->prefilled + chunk_of(x, budget, cap), sc->page_tokens) -
                    (double)x->kv;
                while (extra > kv_free && n_run > i + 1) {
                    preempt_newest(&ss, q, sc->page_tokens, &b, &budget, r);
                    preempting = true;
                }
                if (extra > kv_free) {
                    if (n_run > 1) {
                        preempt_newest(&ss, q, sc->page_tokens, &b, &budget, r);
                        preempting = true;
                    }
                    break;
                }
                kv_free -= extra;
                alloc += extra;
                x->kv += (uint64_t)extra;
            }
            take_chunk(x, &budget, cap, &b);
        }
        unsigned char blocked = 0;
        while (budget && !preempting && (n_pre || (next < released && rq[next].arrive <= t))) {
            const uint32_t id = n_pre ? pre[n_pre - 1] : (uint32_t)next;
            req *x = &rq[id];
            if (n_run >= seq_cap) {
                blocked = 2;
                break;
            }
            const double rest = (double)x->osl - x->generated;
            /* a preempted request under a prefix cache starts from what is still cached of it:
             * its first pages, less those the allocations since have evicted (its last first),
             * at least one token left to compute */
            if (x->cached > 0) {
                const double pg = (double)sc->page_tokens;
                double hit = fmax(0.0, x->cached - fmax(0.0, alloc - x->evict_at));
                hit = fmin(floor(hit / pg) * pg, floor(((double)x->ctx0 - 1.0) / pg) * pg);
                x->prefilled = hit > 0 ? (uint32_t)hit : 0;
            }
            /* by chunk: the first chunk's pages (what the budget leaves of the prompt) */
            const uint64_t hold =
                by_chunk ? pages(x->prefilled + chunk_of(x, budget, cap), sc->page_tokens)
                : grow   ? pages(x->ctx0, sc->page_tokens)
                         : pages((uint64_t)x->isl + x->osl, sc->page_tokens);
            if ((double)hold + (grow ? need + claim + share * rest : 0) > kv_free) {
                x->prefilled = 0;
                blocked = 1;
                break;
            }
            kv_free -= (double)hold;
            alloc += (double)hold; /* its cached pages re-taken count as taken */
            x->cached = 0;
            claim += grow ? share * rest : 0;
            rem += rest;
            x->kv = hold;
            x->kv_tok = 0;
            x->decodes = false;
            if (n_pre)
                n_pre--;
            else
                next++;
            run[n_run++] = id;
            take_chunk(x, &budget, cap, &b);
        }
        if (sc->prefill_apart && !b.prefill_seqs) add_decodes(rq, run, n_run, q, &budget, &b);
        if (b.decode_seqs + b.prefill_seqs == 0) {
            /* nothing to run: wait for the next arrival */
            double ta = next < released ? rq[next].arrive : INFINITY;
            if (!(ta > t) || isinf(ta)) {
                rc = ffn_diag_set(diag, FFN_EINVAL, NULL, 0, 0,
                                  "the scheduler stalled at %.4g s with %llu requests left", t,
                                  (unsigned long long)(N - done));
                goto out;
            }
            if (!push_step(&steps, &n_steps, &cap_steps, (stepr){.t0 = t, .t1 = ta})) {
                rc = ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory");
                goto out;
            }
            t = ta;
            continue;
        }
        ffn_serve_step st;
        rc = ffn_serve_step_eval(c, o, &b, &st, diag);
        if (rc) goto out;
        const double t1 = t + st.step_s;
        /* apply the step as it was built, retire the finished; the others' flags cleared for the
         * next step and what their next decode adds to the cache summed */
        double out_tok = 0, in_tok = 0;
        while (arrived < released && rq[arrived].arrive <= t)
            arrived++;
        const double in_sys = (double)(arrived - done);
        size_t w = 0;
        need = 0;
        for (size_t i = 0; i < n_run; i++) {
            req *x = &rq[run[i]];
            if (x->decodes) {
                double e = o->spec_accept;
                if (x->generated + e > x->osl) e = x->osl - x->generated;
                x->generated += e;
                out_tok += e;
                x->kv_tok += e;
                rem -= e;
            } else if (x->chunk) {
                x->prefilled += x->chunk;
                /* a prompt's tokens count as input once; a recomputed one's do not again */
                const uint32_t in = x->prefilled < x->isl ? x->prefilled : x->isl;
                if (in > x->in_counted) in_tok += in - x->in_counted, x->in_counted = in;
                if (x->prefilled == x->ctx0) {
                    if (isnan(x->first)) x->first = t1;
                    const double g1 = fmin((double)x->osl, floor(x->generated + 1e-9) + 1.0);
                    rem -= g1 - x->generated;
                    x->generated = g1;
                    x->kv_tok = (double)x->ctx0;
                    out_tok += 1;
                }
            }
            if (grow && x->prefilled == x->ctx0 && (uint64_t)ceil(x->kv_tok) > x->kv) {
                const uint64_t kv = pages((uint64_t)ceil(x->kv_tok), sc->page_tokens);
                kv_free -= (double)(kv - x->kv);
                alloc += (double)(kv - x->kv);
                x->kv = kv;
            }
            if (x->prefilled == x->ctx0 && x->generated >= x->osl - 1e-9) {
                x->done = t1;
                kv_free += (double)x->kv;
                rem -= (double)x->osl - x->generated;
                done++;
                if (o->mode == FFN_SERVE_CONCURRENCY && released < N) rq[released++].arrive = t1;
            } else {
                x->decodes = false;
                x->chunk = 0;
                if (grow) need += growth(x, q, sc->page_tokens);
                run[w++] = run[i];
            }
        }
        n_run = w;
        const double ctx = b.decode_seqs ? b.decode_ctx / (double)b.decode_seqs : 0;
        const uint64_t waiting = arrived > next ? arrived - next : 0;
        const stepr rec = {
            .t0 = t,
            .t1 = t1,
            .out_tokens = out_tok,
            .in_tokens = in_tok,
            .running = (double)(b.decode_seqs + b.prefill_seqs),
            .in_system = in_sys,
            .waiting = (double)waiting,
            .ctx_mean = ctx,
            .parts = {st.gemm_s - st.comm_s, st.attn_s + st.lm_head_s + st.draft_s, st.comm_s,
                      st.overhead_s},
            .blocked = blocked,
        };
        if (!push_step(&steps, &n_steps, &cap_steps, rec)) {
            rc = ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory");
            goto out;
        }
        t = t1;
        if (b.decode_seqs && decay > 0) share = fmax(sc->reserve_output_min, share - decay);
    }

    /* the measured window */
    double ta, tb;
    if (o->mode == FFN_SERVE_OFFLINE) {
        ta = 0;
        tb = t;
    } else if (o->mode == FFN_SERVE_RATE) {
        ta = rq[N / 5].arrive;
        tb = rq[N - N / 5 - 1].arrive;
    } else {
        for (uint64_t i = 0; i < N; i++)
            tmp[i] = rq[i].done;
        ffn_sort_doubles(tmp, N);
        ta = tmp[N / 5];
        tb = tmp[N - N / 5 - 1];
    }
    if (!(tb > ta)) ta = 0, tb = t;
    double out_w = 0, in_w = 0, run_w = 0, sys_w = 0, ctx_w = 0, ctx_t = 0, busy = 0, idle = 0;
    double kvb = 0, seqb = 0, parts[4] = {0}, wa = NAN, wb = NAN, tok_w = 0;
    uint64_t steps_w = 0;
    for (size_t i = 0; i < n_steps; i++) {
        const stepr *s = &steps[i];
        double lo = s->t0 > ta ? s->t0 : ta, hi = s->t1 < tb ? s->t1 : tb;
        if (!(hi > lo)) continue;
        double f = (hi - lo) / (s->t1 - s->t0), d = hi - lo;
        if (isnan(wa)) wa = s->waiting;
        wb = s->waiting;
        if (s->running == 0) {
            idle += d;
            continue;
        }
        steps_w++;
        busy += d;
        out_w += f * s->out_tokens;
        in_w += f * s->in_tokens;
        tok_w += d * (s->in_tokens + s->running);
        run_w += d * s->running;
        sys_w += d * s->in_system;
        if (s->ctx_mean > 0) ctx_w += d * s->ctx_mean, ctx_t += d;
        if (s->blocked == 1) kvb += d;
        if (s->blocked == 2) seqb += d;
        for (int k = 0; k < 4; k++)
            parts[k] += f * s->parts[k];
    }
    const double W = tb - ta;
    r->window_s = W;
    r->steps = n_steps;
    r->requests = N;
    r->kv_tokens = c->kv_tokens;
    r->output_tokens_per_s = out_w / W;
    r->total_tokens_per_s = (out_w + in_w) / W;
    const double devices = (double)ffn_plan_shape_devices(&c->shape);
    r->output_tokens_per_s_device = r->output_tokens_per_s / devices;
    r->mean_running = run_w / W;
    r->mean_in_system = sys_w / W;
    r->mean_context = ctx_t > 0 ? ctx_w / ctx_t : 0;
    r->mean_step_s = steps_w ? busy / (double)steps_w : 0;
    r->mean_step_tokens = busy > 0 ? tok_w / busy : 0;
    r->idle_share = idle / W;
    double ptot = parts[0] + parts[1] + parts[2] + parts[3];
    for (int k = 0; k < 4; k++)
        r->share[k] = ptot > 0 ? parts[k] / ptot : 0;
    /* per request: the ones that arrived in the window (all of them offline) */
    size_t nt = 0, np = 0;
    double e2e = 0, ttft = 0, tpot = 0, done_w = 0;
    double *tt = tmp;
    double *tp = malloc(N * sizeof *tp);
    if (!tp) {
        rc = ffn_diag_set(diag, FFN_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    for (uint64_t i = 0; i < N; i++) {
        const req *x = &rq[i];
        if (x->done >= ta && x->done <= tb) done_w += 1;
        bool in = o->mode == FFN_SERVE_OFFLINE ||
                  (o->mode == FFN_SERVE_RATE ? x->arrive >= ta && x->arrive <= tb
                                             : x->done >= ta && x->done <= tb);
        if (!in) continue;
        tt[nt++] = x->first - x->arrive;
        ttft += x->first - x->arrive;
        e2e += x->done - x->arrive;
        if (x->osl > 1) {
            tp[np] = (x->done - x->first) / ((double)x->osl - 1.0);
            tpot += tp[np++];
        }
    }
    ffn_sort_doubles(tt, nt);
    ffn_sort_doubles(tp, np);
    r->ttft_p50_s = ffn_quantile_sorted(tt, nt, 0.5);
    r->ttft_p90_s = ffn_quantile_sorted(tt, nt, 0.9);
    r->ttft_mean_s = nt ? ttft / (double)nt : NAN;
    r->tpot_p50_s = np ? ffn_quantile_sorted(tp, np, 0.5) : 0;
    r->tpot_p90_s = np ? ffn_quantile_sorted(tp, np, 0.9) : 0;
    r->tpot_mean_s = np ? tpot / (double)np : 0;
    r->e2e_mean_s = nt ? e2e / (double)nt : NAN;
    free(tp);
    r->requests_per_s = o->mode == FFN_SERVE_OFFLINE ? (double)N / W : done_w / W;
    r->little_in_system = r->requests_per_s * r->e2e_mean_s;
    r->user_tokens_per_s = r->tpot_p50_s > 0 ? 1.0 / r->tpot_p50_s : 0;
    r->stable = true;
    if (o->mode == FFN_SERVE_RATE) {
        r->queue_growth = (wb - wa) / W;
        if (r->queue_growth > 0.05 * o->rate && wb > 10) {
            r->stable = false;
            /* what it serves: every request over the whole run, the queue never empty */
            r->requests_per_s = (double)N / t;
        }
    }
    /* what bounds it */
    if (idle / W > 0.5)
        r->bound = FFN_SBN_CLIENTS;
    else if (kvb / W > 0.5)
        r->bound = FFN_SBN_KV;
    else if (seqb / W > 0.5)
        r->bound = FFN_SBN_SEQS;
    else {
        int k = 0;
        for (int i = 1; i < 4; i++)
            if (r->share[i] > r->share[k]) k = i;
        static const ffn_serve_bound by[] = {FFN_SBN_GEMM, FFN_SBN_ATTENTION, FFN_SBN_COMM,
                                             FFN_SBN_OVERHEAD};
        r->bound = by[k];
    }
    rc = 0;
out:
    free(rq);
    free(run);
    free(pre);
    free(steps);
    free(tmp);
    return rc;
}

bool ffn_serve_range(const ffn_hw *hw, ffn_dtype wdtype, const ffn_engine_sched *s, double *p10,
                     double *p90)
{
    const bool def = ffn_hw_unc_range_dt(hw, wdtype, p10, p90);
    if (s->range_p10 > 0 && s->range_p90 > s->range_p10) {
        /* two independent spreads about 1: their logarithms add in quadrature (a spread that
         * does not straddle 1 is a shift as well: then the two multiply) */
        const double a = log(*p10), b = log(s->range_p10), u = log(*p90), v = log(s->range_p90);
        const bool about_one = a <= 0 && b <= 0 && u >= 0 && v >= 0;
        *p10 = about_one ? exp(-sqrt(a * a + b * b)) : exp(a + b);
        *p90 = about_one ? exp(sqrt(u * u + v * v)) : exp(u + v);
    }
    return def;
}

int ffn_serve_point_eval(ffn_serve_ctx *c, const ffn_serve_opts *o, ffn_serve_point *pt,
                         ffn_diag *diag)
{
    memset(pt, 0, sizeof *pt);
    pt->shape = c->shape;
    pt->concurrency = o->concurrency;
    double p10, p90;
    ffn_serve_range(c->hw, c->plan.wdtype, &o->sched, &p10, &p90);
    ffn_serve_opts x = *o;
    x.step_scale = 1.0;
    x.moe_scale = 0;
    int rc = ffn_serve_run(c, &x, &pt->r, diag);
    if (rc) return rc;
    ffn_serve_result lo, hi;
    /* slower steps: the low end of the throughput; the fused-MoE kernels (priced by the run
     * above) at their family's ends */
    x.step_scale = p90;
    x.moe_scale = c->moe_p90;
    if ((rc = ffn_serve_run(c, &x, &lo, diag))) return rc;
    x.step_scale = p10;
    x.moe_scale = c->moe_p10;
    if ((rc = ffn_serve_run(c, &x, &hi, diag))) return rc;
    /* the ends as ordered values: under a fixed arrival rate the throughput is the demand's at
     * either end, up to the simulation's noise */
    pt->tps_device_lo = fmin(lo.output_tokens_per_s_device, hi.output_tokens_per_s_device);
    pt->tps_device_hi = fmax(lo.output_tokens_per_s_device, hi.output_tokens_per_s_device);
    pt->user_tps_lo = fmin(lo.user_tokens_per_s, hi.user_tokens_per_s);
    pt->user_tps_hi = fmax(lo.user_tokens_per_s, hi.user_tokens_per_s);
    pt->tpot_lo_s = fmin(hi.tpot_p50_s, lo.tpot_p50_s);
    pt->tpot_hi_s = fmax(hi.tpot_p50_s, lo.tpot_p50_s);
    pt->ttft_lo_s = fmin(hi.ttft_p50_s, lo.ttft_p50_s);
    pt->ttft_hi_s = fmax(hi.ttft_p50_s, lo.ttft_p50_s);
    return 0;
}

void ffn_serve_mark_frontier(ffn_serve_point *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        p[i].frontier = p[i].r.stable;
        for (size_t j = 0; j < n && p[i].frontier; j++) {
            if (j == i || !p[j].r.stable) continue;
            const ffn_serve_result *a = &p[i].r, *b = &p[j].r;
            bool ge = b->output_tokens_per_s_device >= a->output_tokens_per_s_device &&
                      b->user_tokens_per_s >= a->user_tokens_per_s;
            bool gt = b->output_tokens_per_s_device > a->output_tokens_per_s_device ||
                      b->user_tokens_per_s > a->user_tokens_per_s;
            if (ge && gt) p[i].frontier = false;
        }
    }
}

int ffn_serve_pick(const ffn_serve_point *p, size_t n, double min_user_tps, double max_ttft_s)
{
    int best = -1;
    for (size_t i = 0; i < n; i++) {
        if (!p[i].r.stable || p[i].r.user_tokens_per_s < min_user_tps) continue;
        if (max_ttft_s > 0 && !(p[i].r.ttft_p90_s <= max_ttft_s)) continue;
        if (best < 0 || p[i].r.output_tokens_per_s_device > p[best].r.output_tokens_per_s_device)
            best = (int)i;
    }
    return best;
}

double ffn_serve_usd_per_mtok(double price_per_hour, double tokens_per_s_device)
{
    return price_per_hour > 0 && tokens_per_s_device > 0
               ? price_per_hour / (tokens_per_s_device * 3600.0) * 1e6
               : NAN;
}

size_t ffn_serve_shapes(const ffn_model *m, const ffn_plan_opts *o, bool ep_given,
                        uint64_t max_devices, ffn_plan_shape *out)
{
    const bool moe = ffn_model_moe_layers(m) > 0;
    size_t n = 0;
    const size_t npp = o->n_pp ? o->n_pp : 1;
    for (size_t a = 0; a < o->n_tp; a++)
        for (size_t b = 0; b < (moe ? o->n_dp : 1); b++)
            for (size_t c = 0; c < (moe && ep_given ? o->n_ep : 1); c++)
                for (size_t d = 0; d < npp; d++) {
                    ffn_plan_shape s = {o->tp[a], moe ? o->dp[b] : 1, 1, o->n_pp ? o->pp[d] : 1};
                    s.ep = moe ? (ep_given ? o->ep[c] : s.tp * s.dp) : 1;
                    if (ffn_plan_shape_devices(&s) > max_devices || n == FFN_SERVE_MAX_SHAPES)
                        continue;
                    out[n++] = s;
                }
    return n;
}
