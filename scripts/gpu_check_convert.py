#!/usr/bin/env python3
"""Turn bench/gpu/torch_ffn_check.py's CSV into the MLP check format (data/check/README.md),
one dtype, so that bench/bench_check_mlp.c compares it with the simulator's predictions: scripts/gpu_check_convert.py RAW.csv DTYPE > OUT.csv"""
import collections
import csv
import sys

if len(sys.argv) != 3:
    sys.exit(__doc__)
rows = csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))
by = collections.OrderedDict()
for r in rows:
    if r["dtype"] != sys.argv[2]:
        continue
    k = (r["model"], r["tp"], r["num_tokens"], r["d"], r["f"], r["gated"])
    by.setdefault(k, {})[r["op"]] = float(r["time_us"]) / 1000
print("model,source_commit,num_tensor_parallel_workers,num_tokens,n_embd,n_expanded_embd,"
      "use_gated_mlp,time_stats.mlp_up_proj.median,time_stats.mlp_act.median,"
      "time_stats.mlp_down_proj.median")
for k, v in by.items():
    print(f"{k[0]},ffnroof,{k[1]},{k[2]},{k[3]},{k[4]},{k[5]},"
          f"{v['up_proj']:.5f},{v['act']:.5f},{v['down_proj']:.5f}")
