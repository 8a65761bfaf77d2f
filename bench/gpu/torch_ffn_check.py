#!/usr/bin/env python3
"""FFN operator times through PyTorch on one NVIDIA GPU (bench/gpu/README.md).

Times the three MLP operators of one device's shard of a Megatron-style tensor-parallel layer:
the up projection [T, d] x [d, g*f/tp] (g = 2 for gated MLPs: gate and up in one GEMM), the
activation (gated: SiLU(gate) * up as two PyTorch kernels, no fused kernel here; GELU MLPs:
torch.nn.functional.gelu) and the down projection [T, f/tp] x [f/tp, d], fp16 and bf16, for
Llama-2-7B and -70B at tensor-parallel degrees 1, 2, 4, 8 and phi-2 at 1, with T = 1 .. 4096.

Each time is device time per operator: R back-to-back calls captured in one CUDA graph, the
graph replayed K times between two CUDA events (no host launch cost in the figure), weights
rotated over enough buffers that L2 does not hold them; the median of 3 such timings.
These are a check on a spec fitted to the calibration kit's CSV (ffn_gpu_calib): nothing is
fitted to them.

  torch_ffn_check.py [--out FILE] [--dtypes fp16,bf16] [--quick]
"""
import argparse
import datetime
import statistics
import sys

import torch
import torch.nn.functional as F

MODELS = [  # name, d (hidden size), f (intermediate size), gated, tp degrees (the models' configs)
    ("meta-llama/Llama-2-7b-hf", 4096, 11008, True, (1, 2, 4, 8)),
    ("meta-llama/Llama-2-70b-hf", 8192, 28672, True, (1, 2, 4, 8)),
    ("microsoft/phi-2", 2560, 10240, False, (1,)),
]
TOKENS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 1024, 2048, 4096)
TOKENS_QUICK = (1, 16, 128, 512, 4096)


def timed(fn, nbuf, target_s=0.008):
    """Median seconds per fn(i) call: R calls in one CUDA graph, replayed K times."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for i in range(3):
            fn(i)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    # one plain call sizes R so that one replay is about 1 ms of work (at least nbuf calls)
    a.record()
    fn(0)
    b.record()
    b.synchronize()
    one = max(a.elapsed_time(b) * 1e-3, 1e-6)
    reps = max(nbuf, min(200, int(1e-3 / one) + 1))
    reps = (reps + nbuf - 1) // nbuf * nbuf
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(reps):
            fn(i)
    g.replay()
    torch.cuda.synchronize()
    a.record()
    g.replay()
    b.record()
    b.synchronize()
    per_replay = max(a.elapsed_time(b) * 1e-3, 1e-6)
    k = max(1, min(200, int(target_s / per_replay)))
    runs = []
    for _ in range(3):
        a.record()
        for _ in range(k):
            g.replay()
        b.record()
        b.synchronize()
        runs.append(a.elapsed_time(b) * 1e-3 / (k * reps))
    del g
    return statistics.median(runs), reps * k


def nbufs(nbytes, l2):
    return max(1, min(64, 3 * l2 // max(nbytes, 1) + 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="torch-ffn-check.csv")
    ap.add_argument("--dtypes", default="fp16,bf16")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    dts = {"fp16": torch.float16, "bf16": torch.bfloat16}
    want = [d for d in args.dtypes.split(",") if d in dts]
    dev = torch.device("cuda")
    prop = torch.cuda.get_device_properties(dev)
    l2 = getattr(prop, "L2_cache_size", 60 * 2**20)
    out = open(args.out, "w")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out.write(
        f"# Measured by bench/gpu/torch_ffn_check.py on {prop.name} ({prop.multi_processor_count} SMs, "
        f"L2 {l2} B), torch {torch.__version__}, CUDA {torch.version.cuda}, {now}.\n"
        "# Device time per operator call (CUDA graph replay between CUDA events, weights rotated past L2),\n"
        "# median of 3; act for gated MLPs is SiLU(gate) * up as two PyTorch kernels (not fused).\n"
        "model,tp,num_tokens,d,f,gated,dtype,op,time_us,calls\n")
    toks = TOKENS_QUICK if args.quick else TOKENS
    torch.manual_seed(0)
    for dname in want:
        dt = dts[dname]
        for name, d, f, gated, tps in MODELS:
            for tp in tps:
                fs = f // tp
                n_up = (2 if gated else 1) * fs
                nw = nbufs(n_up * d * 2, l2)
                w_up = [torch.randn(n_up, d, device=dev, dtype=dt) * 0.02 for _ in range(nw)]
                nd = nbufs(d * fs * 2, l2)
                w_dn = [torch.randn(d, fs, device=dev, dtype=dt) * 0.02 for _ in range(nd)]
                print(f"torch_ffn_check: {dname} {name} tp {tp}", file=sys.stderr, flush=True)
                for T in toks:
                    x = torch.randn(T, d, device=dev, dtype=dt)
                    hu = torch.empty(T, n_up, device=dev, dtype=dt)
                    h = torch.randn(T, fs, device=dev, dtype=dt)
                    y = torch.empty(T, d, device=dev, dtype=dt)
                    na = nbufs(T * (n_up + fs) * 2, l2)
                    act_in = [torch.randn(T, n_up, device=dev, dtype=dt) for _ in range(na)]

                    def up(i):
                        torch.matmul(x, w_up[i % nw].t(), out=hu)

                    def down(i):
                        torch.matmul(h, w_dn[i % nd].t(), out=y)

                    def act(i):
                        v = act_in[i % na]
                        if gated:
                            return F.silu(v[:, :fs]) * v[:, fs:]
                        return F.gelu(v)

                    for op, fn, nb in (("up_proj", up, nw), ("act", act, na), ("down_proj", down, nd)):
                        s, calls = timed(fn, nb)
                        out.write(f"{name},{tp},{T},{d},{f},{gated},{dname},{op},{s * 1e6:.3f},{calls}\n")
                        out.flush()
                    del x, hu, h, y, act_in
                del w_up, w_dn
                torch.cuda.empty_cache()
    out.close()
    print(f"torch_ffn_check: wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
