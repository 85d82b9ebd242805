#!/usr/bin/env python3
"""Draws fp8-bench's JSON as a grouped bar chart (TFLOP/s per shape)."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, dst):
    data = json.load(open(src))
    rows = data["rows"]
    labels = [f"{r['m']}x{r['n']}x{r['k']}" for r in rows]
    series = [
        ("ours (sm_90a, 1x128/128x128)", "ours_tflops"),
        ("cuBLASLt FP8 block-scaled", "cublaslt_block_tflops"),
        ("cuBLASLt FP8 per-tensor", "cublaslt_tensor_tflops"),
        ("cuBLASLt BF16", "cublaslt_bf16_tflops"),
    ]
    width = 0.2
    fig, ax = plt.subplots(figsize=(max(10, len(rows) * 1.1), 5))
    for i, (name, key) in enumerate(series):
        xs = [j + (i - 1.5) * width for j in range(len(rows))]
        ax.bar(xs, [r.get(key, 0) for r in rows], width, label=name)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"FP8 GEMM on {data.get('device', 'GPU')} (M x N x K)")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(dst, dpi=120)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: plot-bench.py BENCH.json OUT.png")
    main(sys.argv[1], sys.argv[2])
