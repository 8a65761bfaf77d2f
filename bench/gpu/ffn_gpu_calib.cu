/* ffnroof GPU calibration kit (bench/gpu/README.md): times FFN-shaped bf16/fp16 GEMMs (cuBLAS),
 * the SiLU-and-multiply pass and read/copy bandwidth on one NVIDIA GPU and writes the CSV that
 * `ffnroof fit --hw DEVICE --data FILE --fit util,elem,gemv,launch,memory-ramp` turns into a
 * calibrated spec (format: docs/formats.md, "Fit data": kind,dtype,m,n,k,time_us).
 *
 *   ffn_gpu_calib [--out FILE] [--quick] [--dtypes bf16,fp16] [--device N] [--no-graph]
 *                 [--max-tp N] [--warm]
 *
 * Every time is the mean device time of one kernel over back-to-back repetitions, replayed as
 * one CUDA graph between two CUDA events (no host launch or synchronisation in between), after
 * warm-up, with the weights rotated over enough buffers that the L2 cache does not hold them.
 * No per-call harness overhead is in the numbers, so the file says '#@ harness off'. --warm
 * uses one buffer of each kind instead, reused call after call, so that what fits in L2 stays
 * there (warm weights on a GPU; the file then says '#@ weights hot'). */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                                    \
    do {                                                                                         \
        cudaError_t e_ = (x);                                                                    \
        if (e_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "ffn_gpu_calib: %s:%d: %s: %s\n", __FILE__, __LINE__, #x,           \
                    cudaGetErrorString(e_));                                                     \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)
#define CB(x)                                                                                    \
    do {                                                                                         \
        cublasStatus_t s_ = (x);                                                                 \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                       \
            fprintf(stderr, "ffn_gpu_calib: %s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, \
                    #x, (int)s_);                                                                \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

/* FFN shapes (hidden d, intermediate f per expert or dense layer) of the model families the
 * issue names; values from each model's config.json (models/ in this repository where
 * shipped). */
static const struct {
    const char *name;
    uint64_t d, f;
} families[] = {
    {"llama2-7b", 4096, 11008},     {"llama3-8b/mixtral-8x7b", 4096, 14336},
    {"llama2-70b", 8192, 28672},    {"qwen2.5-7b", 3584, 18944},
    {"qwen2.5-72b", 8192, 29568},   {"deepseek-v3-expert", 7168, 2048},
    {"deepseek-v3-dense", 7168, 18432},
};
static const uint64_t tokens_full[] = {1,   2,   4,   8,    16,   32,   64,  128,
                                       192, 256, 384, 512, 1024, 2048, 4096, 8192};
static const uint64_t tokens_quick[] = {1, 16, 128, 256, 1024, 4096};

typedef enum { DT_BF16 = 0, DT_FP16 = 1 } dtype;
static const char *dt_name[] = {"bf16", "fp16"};

static double target_s = 0.02; /* time spent per measurement, about */
static bool warm = false;      /* --warm: no rotation, the data stays in L2 where it fits */

typedef struct timer {
    cudaEvent_t a, b;
    cudaStream_t s; /* every timed call runs on this stream */
    bool graph;     /* replay the repetitions as one CUDA graph (--no-graph: launch them) */
    bool fell_back; /* a capture failed once: plain launches from then on */
} timer;

/* Mean seconds per call of fn(i) over reps back-to-back calls, after 3 warm-up calls; reps is
 * chosen from one timed call so that the measurement takes about target_s. With t->graph the
 * reps calls are captured into one CUDA graph and the graph is launched (after one warm-up
 * launch) between the two events, so a kernel shorter than its host-side launch is timed as
 * the device runs it, not at the rate the host enqueues it; where capture fails the calls are
 * launched as they are and the run says so on stderr and in the CSV's header. */
template <class F> static double time_it(timer *t, F fn)
{
    for (int i = 0; i < 3; i++) fn(i);
    CK(cudaEventRecord(t->a, t->s));
    fn(3);
    CK(cudaEventRecord(t->b, t->s));
    CK(cudaEventSynchronize(t->b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, t->a, t->b));
    int reps = ms > 0 ? (int)(target_s * 1e3 / ms) : 200;
    if (reps < 5) reps = 5;
    if (reps > 1000) reps = 1000;
    if (t->graph && !t->fell_back) {
        cudaGraph_t g = NULL;
        cudaGraphExec_t ge = NULL;
        bool ok = cudaStreamBeginCapture(t->s, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
        if (ok) {
            for (int i = 0; i < reps; i++) fn(i);
            ok = cudaStreamEndCapture(t->s, &g) == cudaSuccess && g != NULL;
        }
        ok = ok && cudaGraphInstantiate(&ge, g, 0) == cudaSuccess;
        if (ok) {
            CK(cudaGraphLaunch(ge, t->s));
            CK(cudaEventRecord(t->a, t->s));
            CK(cudaGraphLaunch(ge, t->s));
            CK(cudaEventRecord(t->b, t->s));
            CK(cudaEventSynchronize(t->b));
            CK(cudaEventElapsedTime(&ms, t->a, t->b));
        }
        if (ge) cudaGraphExecDestroy(ge);
        if (g) cudaGraphDestroy(g);
        if (ok) return (double)ms * 1e-3 / reps;
        (void)cudaGetLastError();
        fprintf(stderr, "ffn_gpu_calib: CUDA graph capture failed; launching calls directly\n");
        t->fell_back = true;
    }
    CK(cudaEventRecord(t->a, t->s));
    for (int i = 0; i < reps; i++) fn(i);
    CK(cudaEventRecord(t->b, t->s));
    CK(cudaEventSynchronize(t->b));
    CK(cudaEventElapsedTime(&ms, t->a, t->b));
    return (double)ms * 1e-3 / reps;
}

static __global__ void fill(uint16_t *p, size_t n, uint32_t seed)
{
    /* small values (|x| < 1/64) as 16-bit floats: no overflow in any GEMM here */
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u ^ seed;
        float v = ((float)(h >> 8) / 16777216.0f - 0.5f) / 32.0f;
        p[i] = seed & 1 ? __half_as_ushort(__float2half(v))
                        : __bfloat16_as_ushort(__float2bfloat16(v));
    }
}

template <class T> __device__ float to_f(T x);
template <> __device__ float to_f<__half>(__half x) { return __half2float(x); }
template <> __device__ float to_f<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T> __device__ T from_f(float x);
template <> __device__ __half from_f<__half>(float x) { return __float2half(x); }
template <> __device__ __nv_bfloat16 from_f<__nv_bfloat16>(float x) { return __float2bfloat16(x); }

/* out[t, j] = silu(in[t, j]) * in[t, f + j]: the gate and up halves of one [T, 2f] GEMM
 * output (vLLM's layout), 8 elements (16 bytes) per thread and step. */
template <class T>
static __global__ void silu_mul(const T *__restrict__ in, T *__restrict__ out, uint64_t T_, uint64_t f)
{
    const uint64_t vec = f / 8, total = T_ * vec;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < total;
         i += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t t = i / vec, j = (i % vec) * 8;
        uint4 g = *(const uint4 *)(in + t * 2 * f + j);
        uint4 u = *(const uint4 *)(in + t * 2 * f + f + j);
        uint4 o;
        const T *gp = (const T *)&g, *up = (const T *)&u;
        T *op = (T *)&o;
#pragma unroll
        for (int k = 0; k < 8; k++) {
            float x = to_f(gp[k]);
            op[k] = from_f<T>(x / (1.0f + __expf(-x)) * to_f(up[k]));
        }
        *(uint4 *)(out + t * f + j) = o;
    }
}

/* Sum of n 16-byte words as floats into *acc (a read-bandwidth kernel): one atomic per block
 * (one per warp serialised ~17,000 atomics on one address, a 30 us floor on an H200). */
static __global__ void read_sum(const uint4 *__restrict__ p, uint64_t n, float *acc)
{
    __shared__ float part[32];
    float s = 0;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        uint4 v = p[i];
        s += __uint_as_float(v.x & 0x3f800000u) + __uint_as_float(v.y & 0x3f800000u) +
             __uint_as_float(v.z & 0x3f800000u) + __uint_as_float(v.w & 0x3f800000u);
    }
    for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.0f;
        for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
        if (threadIdx.x == 0) atomicAdd(acc, s);
    }
}

/* b = a over n 16-byte words: an SM copy, as a framework's tensor copy runs (a graph's memcpy
 * node may go to a copy engine, about 2.7 TB/s read + write on an H200 against 4.2 by SMs). */
static __global__ void copy16(const uint4 *__restrict__ a, uint4 *__restrict__ b, uint64_t n)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x)
        b[i] = a[i];
}

/* Blocks of `threads` for a grid-stride loop over n items: enough to cover n, at most 16 a
 * multiprocessor. */
static int grid_for(uint64_t n, int threads, int sms)
{
    uint64_t b = (n + (uint64_t)threads - 1) / (uint64_t)threads;
    if (b > (uint64_t)sms * 16) b = (uint64_t)sms * 16;
    return b < 1 ? 1 : (int)b;
}

typedef struct ctx {
    cublasHandle_t blas;
    timer tm;
    int sms;
    size_t l2;
    size_t free_bytes;
    FILE *out;
    int rows;
} ctx;

static uint16_t *dev_alloc(size_t elems, uint32_t seed)
{
    uint16_t *p = NULL;
    CK(cudaMalloc(&p, elems * sizeof *p));
    fill<<<1024, 256>>>(p, elems, seed);
    CK(cudaGetLastError());
    return p;
}

/* Buffers of `bytes` each to rotate over so that about 3 x L2 is touched between two uses of
 * one buffer (at most MAX_ROT, and at most a quarter of the free memory in all): 64 keep a
 * tensor-parallel shard's 3 MB weights out of a 60 MB L2. */
#define MAX_ROT 64
static int rotation(const ctx *c, size_t bytes)
{
    if (warm) return 1;
    int n = (int)(3 * c->l2 / (bytes ? bytes : 1)) + 1;
    if (n > MAX_ROT) n = MAX_ROT;
    while (n > 1 && (size_t)n * bytes > c->free_bytes / 4) n--;
    return n;
}

static void row(ctx *c, const char *kind, dtype dt, uint64_t m, uint64_t n, uint64_t k, double s)
{
    fprintf(c->out, "%s,%s,%llu,%llu,%llu,%.4f\n", kind, dt_name[dt], (unsigned long long)m,
            (unsigned long long)n, (unsigned long long)k, s * 1e6);
    fflush(c->out);
    c->rows++;
}

/* Y[T, n] = X[T, k] W[n, k]^T (torch.nn.Linear) in column-major cuBLAS terms. */
static void gemm(ctx *c, dtype dt, uint64_t T, uint64_t n, uint64_t k)
{
    const cudaDataType ty = dt == DT_BF16 ? CUDA_R_16BF : CUDA_R_16F;
    const size_t wbytes = (size_t)n * k * 2;
    if (wbytes + ((size_t)T * k + (size_t)T * n) * 2 > c->free_bytes / 2) {
        fprintf(stderr, "ffn_gpu_calib: skipping %s gemm %llux%llux%llu: does not fit\n",
                dt_name[dt], (unsigned long long)T, (unsigned long long)n, (unsigned long long)k);
        return;
    }
    int nw = rotation(c, wbytes);
    uint16_t *w[MAX_ROT];
    for (int i = 0; i < nw; i++) w[i] = dev_alloc((size_t)n * k, 2u * (uint32_t)i + (dt == DT_FP16));
    uint16_t *x = dev_alloc((size_t)T * k, 100u + (dt == DT_FP16));
    uint16_t *y = dev_alloc((size_t)T * n, 200u + (dt == DT_FP16));
    const float one = 1.0f, zero = 0.0f;
    double s = time_it(&c->tm, [&](int i) {
        CB(cublasGemmEx(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)T, (int)k, &one,
                        w[i % nw], ty, (int)k, x, ty, (int)k, &zero, y, ty, (int)n,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    });
    row(c, "gemm", dt, T, n, k, s);
    for (int i = 0; i < nw; i++) CK(cudaFree(w[i]));
    CK(cudaFree(x));
    CK(cudaFree(y));
}

static void act(ctx *c, dtype dt, uint64_t T, uint64_t f)
{
    const size_t bytes = (size_t)T * 3 * f * 2;
    int nb = rotation(c, bytes);
    uint16_t *in[MAX_ROT], *out[MAX_ROT];
    for (int i = 0; i < nb; i++) {
        in[i] = dev_alloc((size_t)T * 2 * f, 300u + (dt == DT_FP16));
        out[i] = dev_alloc((size_t)T * f, 400u + (dt == DT_FP16));
    }
    const uint64_t work = T * (f / 8);
    int blocks = (int)((work + 255) / 256);
    if (blocks > c->sms * 32) blocks = c->sms * 32;
    if (blocks < 1) blocks = 1;
    double s = time_it(&c->tm, [&](int i) {
        if (dt == DT_BF16)
            silu_mul<__nv_bfloat16><<<blocks, 256, 0, c->tm.s>>>((const __nv_bfloat16 *)in[i % nb],
                                                     (__nv_bfloat16 *)out[i % nb], T, f);
        else
            silu_mul<__half><<<blocks, 256, 0, c->tm.s>>>((const __half *)in[i % nb], (__half *)out[i % nb], T, f);
    });
    CK(cudaGetLastError());
    row(c, "silu_mul", dt, T, f, 1, s);
    for (int i = 0; i < nb; i++) {
        CK(cudaFree(in[i]));
        CK(cudaFree(out[i]));
    }
}

/* copy (copy16) and read (read_sum) of `elems` 2-byte elements */
static void bandwidth(ctx *c, uint64_t elems)
{
    const size_t bytes = (size_t)elems * 2;
    if (3 * bytes > c->free_bytes / 2) return;
    const int nb = rotation(c, 2 * bytes); /* pairs (a, b), rotated past L2 like the weights */
    uint16_t *a[MAX_ROT], *b[MAX_ROT];
    for (int i = 0; i < nb; i++) {
        a[i] = dev_alloc(elems, 500u);
        b[i] = dev_alloc(elems, 501u);
    }
    const uint64_t words = bytes / 16;
    const int cb = grid_for(words, 256, c->sms), rb = grid_for(words, 512, c->sms);
    double s = time_it(&c->tm, [&](int i) {
        copy16<<<cb, 256, 0, c->tm.s>>>((const uint4 *)a[i % nb], (uint4 *)b[i % nb], words);
    });
    CK(cudaGetLastError());
    row(c, "copy", DT_BF16, elems, 1, 1, s);
    float *acc = NULL;
    CK(cudaMalloc(&acc, sizeof *acc));
    s = time_it(&c->tm, [&](int i) {
        read_sum<<<rb, 512, 0, c->tm.s>>>((const uint4 *)a[i % nb], words, acc);
    });
    CK(cudaGetLastError());
    row(c, "read", DT_BF16, elems, 1, 1, s);
    CK(cudaFree(acc));
    for (int i = 0; i < nb; i++) {
        CK(cudaFree(a[i]));
        CK(cudaFree(b[i]));
    }
}

static void usage(FILE *fp)
{
    fputs("usage: ffn_gpu_calib [--out FILE] [--quick] [--dtypes bf16,fp16] [--device N] [--no-graph]\n"
          "                     [--max-tp N] [--warm]\n"
          "Times FFN-shaped GEMMs, SiLU-and-multiply and read/copy bandwidth on one GPU and\n"
          "writes the CSV for `ffnroof fit --hw DEVICE --data FILE --fit\n"
          "util,elem,gemv,launch,memory-ramp`\n"
          "(default FILE: gpu-calib.csv; --quick: 6 token counts instead of 16; --no-graph:\n"
          "launch each timed call from the host instead of replaying them as one CUDA graph;\n"
          "--max-tp N: also each device's shard at tensor-parallel degrees 2, 4 .. N, default 8;\n"
          "--warm: one buffer of each kind, reused call after call, so that what fits in L2\n"
          "stays there: the file says '#@ weights hot' and `ffnroof fit --check` predicts it so).\n",
          fp);
}

int main(int argc, char **argv)
{
    const char *path = "gpu-calib.csv";
    bool quick = false, graph = true, want[2] = {true, true};
    int device = 0, max_tp = 8;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) path = argv[++i];
        else if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--no-graph")) graph = false;
        else if (!strcmp(argv[i], "--warm")) warm = true;
        else if (!strcmp(argv[i], "--max-tp") && i + 1 < argc) {
            max_tp = atoi(argv[++i]);
            if (max_tp < 1 || max_tp > 64) {
                usage(stderr);
                return 2;
            }
        }
        else if (!strcmp(argv[i], "--device") && i + 1 < argc) device = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dtypes") && i + 1 < argc) {
            const char *v = argv[++i];
            want[DT_BF16] = strstr(v, "bf16") != NULL;
            want[DT_FP16] = strstr(v, "fp16") != NULL;
            if (!want[0] && !want[1]) {
                usage(stderr);
                return 2;
            }
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    CK(cudaSetDevice(device));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, device));
    ctx c;
    memset(&c, 0, sizeof c);
    c.sms = prop.multiProcessorCount;
    c.l2 = (size_t)prop.l2CacheSize;
    size_t total = 0;
    CK(cudaMemGetInfo(&c.free_bytes, &total));
    CB(cublasCreate(&c.blas));
    CK(cudaEventCreate(&c.tm.a));
    CK(cudaEventCreate(&c.tm.b));
    CK(cudaStreamCreate(&c.tm.s));
    CB(cublasSetStream(c.blas, c.tm.s));
    c.tm.graph = graph;
    c.out = fopen(path, "w");
    if (!c.out) {
        perror(path);
        return 1;
    }
    int drv = 0, rt = 0, blas = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    cublasGetVersion(c.blas, &blas);
    int clock_khz = 0; /* cudaDeviceProp::clockRate is gone from CUDA 13 */
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device);
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fprintf(c.out,
            "# Measured by bench/gpu/ffn_gpu_calib (ffnroof GPU calibration kit) on %s\n"
            "# (%d SMs, %.0f MHz, L2 %zu B, %.1f GB), CUDA driver %d, runtime %d, cuBLAS %d, %s.\n"
            "# Mean device time per kernel over back-to-back repetitions (CUDA events%s), %s;\n"
            "# gemm: Y[m,n] = X[m,k] W[n,k]^T (cublasGemmEx, fp32 accumulate);\n"
            "# silu_mul: m tokens x n features; copy/read: m 2-byte elements.\n"
            "# Fit: ffnroof fit --hw DEVICE --data THIS --fit util,elem,gemv,launch,memory-ramp --out SPEC.yaml\n"
            "#@ harness off\n"
            "%s"
            "kind,dtype,m,n,k,time_us\n",
            prop.name, c.sms, clock_khz / 1e3, c.l2, (double)total / 1e9, drv, rt, blas, date,
            graph ? "; the repetitions replayed as one CUDA graph" : "; each call launched by the host",
            warm ? "one buffer of each kind reused call after call (what fits stays in L2)"
                 : "weights and data rotated past the L2",
            warm ? "#@ weights hot\n" : "");
    const uint64_t *tok = quick ? tokens_quick : tokens_full;
    const size_t nt = quick ? sizeof tokens_quick / sizeof *tokens_quick
                            : sizeof tokens_full / sizeof *tokens_full;
    const size_t nf = sizeof families / sizeof *families;
    for (int d = 0; d < 2; d++) {
        if (!want[d]) continue;
        for (size_t a = 0; a < nf; a++)
            for (int tp = 1; tp <= max_tp; tp *= 2) {
                /* one device's shard under tensor parallelism (Megatron: gate/up split by
                 * columns, down by rows): the small weights of a sharded decode */
                const uint64_t fd = families[a].f / (uint64_t)tp, dd = families[a].d;
                if (families[a].f % ((uint64_t)tp * 8)) continue;
                fprintf(stderr, "ffn_gpu_calib: %s %s (d %llu, f %llu, tp %d)\n", dt_name[d],
                        families[a].name, (unsigned long long)dd, (unsigned long long)families[a].f,
                        tp);
                fprintf(c.out, "# %s d %llu f %llu tp %d\n", families[a].name,
                        (unsigned long long)dd, (unsigned long long)families[a].f, tp);
                for (size_t t = 0; t < nt; t++) {
                    gemm(&c, (dtype)d, tok[t], 2 * fd, dd); /* gate+up */
                    gemm(&c, (dtype)d, tok[t], dd, fd);     /* down */
                    act(&c, (dtype)d, tok[t], fd);
                }
            }
    }
    for (uint64_t e = 1u << 20; e <= (1ull << 30); e *= 2) bandwidth(&c, e);
    if (c.tm.fell_back) fprintf(c.out, "# CUDA graph capture failed: later rows launched each call\n");
    fclose(c.out);
    fprintf(stderr, "ffn_gpu_calib: %d rows in %s\n", c.rows, path);
    cublasDestroy(c.blas);
    return 0;
}
