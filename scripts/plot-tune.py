#!/usr/bin/env python3
"""Draws fp8-tune's --json output: for each GEMM, every candidate tile's
TFLOP/s (dots), the heuristic's tile (a cross) and the fastest (a star).

    scripts/plot-tune.py tune.json tune.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def tflops(g, ms):
    return 2.0 * g["m"] * g["n"] * g["k"] / (ms * 1e9) if ms > 0 else 0.0


def main(src, dst):
    data = json.load(open(src))
    gemms = data["gemms"]
    fig, ax = plt.subplots(figsize=(max(10, len(gemms) * 0.55), 5.5))
    for i, g in enumerate(gemms):
        ran = [tflops(g, c["ms"]) for c in g["candidates"] if c["ms"] > 0]
        ax.scatter([i] * len(ran), ran, s=9, color="0.6", alpha=0.6,
                   label="candidates" if i == 0 else None)
        ax.scatter([i], [tflops(g, g["heuristic_ms"])], marker="x", s=60,
                   color="tab:red", label="the heuristic's tile" if i == 0 else None)
        ax.scatter([i], [tflops(g, g["ms"])], marker="*", s=90,
                   color="tab:green", label="fastest (recorded)" if i == 0 else None)
    ax.set_xticks(range(len(gemms)))
    ax.set_xticklabels([f"{g['m']}x{g['n']}x{g['k']}" for g in gemms],
                       rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"fp8-tune on {data.get('device', 'GPU')}: every candidate tile (M x N x K)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: plot-tune.py TUNE.json OUT.png")
    main(sys.argv[1], sys.argv[2])
