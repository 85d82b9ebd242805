#!/usr/bin/env python3
"""Checks the shape sets of bench/: the training set (what a refit of the
tile heuristic fits, with the bench's shapes) shares no weight shape N x K
with the held-out set (what it is never fitted on).

  shape-sets.py SRC_ROOT
"""
import json
import os
import sys

root = sys.argv[1]


def pairs(name):
    rows = json.load(open(os.path.join(root, "bench", name)))["dense"]
    return {(r["N"], r["K"]): r.get("model", "") for r in rows}, len(rows)


heldout, n_heldout = pairs("heldout.json")
training, n_training = pairs("training.json")
bench, _ = pairs("shapes.json")
shared = sorted(set(heldout) & (set(training) | set(bench)))
for n, k in shared:
    print(f"N x K = {n} x {k} is held out ({heldout[(n, k)]}) and fitted")
print(f"held-out {n_heldout} GEMMs, training {n_training} GEMMs, "
      f"{len(shared)} weight shapes in common")
sys.exit(1 if shared else 0)
