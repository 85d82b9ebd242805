#!/usr/bin/env python3
"""How far the tile heuristic's picks are from the fastest measured tile.

Reads the JSON that fp8-tune --json writes (every candidate's time per GEMM,
and the GEMM's recipe; scripts/gpu-check.sh's step training writes
fit-bench.json, fit-training.json and their per-tensor twins) and asks
fp8-codegen for the heuristic's tile of each GEMM, in its recipe, as this
build chooses it. Prints, per GEMM, the pick's measured time over the
fastest candidate's ("regret"), and the geomean. A pick that is not among the
candidates timed is matched on its shape (block, split-K, cluster, overlap),
ignoring rasterisation, split tail and stages, and marked '~'; one matching
nothing is marked '?' and left out of the geomean.

  scripts/heuristic-regret.py [--codegen build/bin/fp8-codegen] FIT.json...
"""
import argparse
import json
import math
import subprocess
import sys

SHAPE_KEYS = ("block_m", "block_n", "split_k", "cluster_m", "cluster_n", "overlap")


def recipe_args(g):
    """fp8-codegen's options for the recipe of report entry g (fp8-tune names
    its preset, null where the recipe has none: then None). Reports without
    "spec" (fp8-tune before 2026-12-07) tuned the shape files' DeepSeek
    recipe."""
    s = g.get("spec")
    if s is None:
        return []
    if g.get("recipe") is None:
        return None
    args = ["--recipe", g["recipe"], "--out", s["out"],
            "--format-a", s["a"]["format"], "--format-b", s["b"]["format"]]
    if s.get("accumulate"):
        args.append("--accumulate")
    return args


def heuristic_tile(codegen, g):
    recipe = recipe_args(g)
    if recipe is None:
        return None
    cmd = [codegen, "--n", str(g["n"]), "--k", str(g["k"]), "--m", str(g["m"]),
           "--emit", "info"] + recipe
    if g.get("kind", "dense") != "dense":
        cmd += ["--kind", g["kind"], "--groups", str(g["groups"])]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("tile "):
            return json.loads(line.split(None, 1)[1])
    raise RuntimeError(f"fp8-codegen printed no tile line for {cmd}")


def short(t):
    s = f"{t['block_m']}x{t['block_n']}"
    if t["split_k"] > 1:
        s += f" sk{t['split_k']}"
    if t["cluster_m"] * t["cluster_n"] > 1:
        s += f" c{t['cluster_m']}x{t['cluster_n']}"
    if t["overlap"] != "none":
        s += f" ov{t['overlap']}"
    if t["tail_split"] > 1:
        s += f" ts{t['tail_split']}"
    return s + f" r{t['raster'][-1]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--codegen", default="build/bin/fp8-codegen")
    ap.add_argument("fits", nargs="+")
    args = ap.parse_args()
    logs = []
    for path in args.fits:
        with open(path) as f:
            fit = json.load(f)
        for g in fit["gemms"]:
            cands = [c for c in g["candidates"] if not c.get("error")]
            if not cands:
                continue
            best = min(cands, key=lambda c: c["ms"])
            pick = heuristic_tile(args.codegen, g)
            name = f"{g['m']}x{g['n']}x{g['k']}"
            if pick is None:
                s = g["spec"]
                print(f"{name:24s} ?    -    (recipe {s['a']['granularity']} x "
                      f"{s['b']['granularity']}: no preset for fp8-codegen)")
                continue
            exact = [c["ms"] for c in cands if c["tile"] == pick]
            mark = " "
            if not exact:
                exact = [c["ms"] for c in cands
                         if all(c["tile"][k] == pick[k] for k in SHAPE_KEYS)]
                mark = "~" if exact else "?"
            if g.get("kind", "dense") != "dense":
                name += f" {g['kind']} G={g['groups']}"
            if exact:
                regret = min(exact) / best["ms"]
                logs.append(math.log(regret))
                print(f"{name:24s} {mark} {regret:6.3f}  pick {short(pick):28s} "
                      f"best {short(best['tile'])} {best['ms'] * 1e3:.1f} us")
            else:
                print(f"{name:24s} ?    -    pick {short(pick):28s} (not timed)")
    if logs:
        print(f"geomean regret {math.exp(sum(logs) / len(logs)):.4f} over {len(logs)} "
              f"GEMMs; worst {math.exp(max(logs)):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
