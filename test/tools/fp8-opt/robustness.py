#!/usr/bin/env python3
"""Feeds fp8-opt broken inputs and checks that each one ends in a diagnostic
and exit code 1: never 0, never a signal, never another code.

  robustness.py FP8_OPT BROKEN_MLIR VALID_MLIR WORKDIR

BROKEN_MLIR holds hand-written broken inputs separated by `// -----` lines;
each becomes a file of its own. VALID_MLIR (the round-trip test) is cut
inside every few lines (truncated files, all invalid) and mutated at random
(absurd sizes and attribute values, wrong types, dropped tokens; the result
may happen to be valid, so 0 is allowed there, a signal never). The seed and
the number of mutants come from FP8_FUZZ_SEED / FP8_FUZZ_COUNT (defaults 1
and 150): a longer hunt is `FP8_FUZZ_COUNT=5000 lit -v <this test>`.
"""

import os
import random
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ABSURD_INTEGERS = ["0", "-1", "1", "31", "4294967296", "72057594037927936",
                   "9223372036854775807", "9223372036854775808",
                   "-9223372036854775808", "0x7fffffffffffffff"]
TYPES = ["bf16", "f16", "f32", "f64", "i8", "i32", "i64", "index",
         "f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f8E4M3FNUZ"]
KEYWORDS = ["per_tensor", "per_row", "per_column", "mx", "whole", "k_major",
            "mn_major", "contiguous", "masked", "along_k", "current", "delayed", "max",
            "most_recent", "history", "granularity", "scale", "acc", "stats",
            "promotion_interval", "layout"]


def run(fp8_opt, path):
    proc = subprocess.run([fp8_opt, path], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=60)
    return proc.returncode, proc.stderr.decode("utf-8", "replace")


def mutate(rng, text):
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(6)
        if kind == 0:
            pattern, choices = r"(?<![\w.%#@])\d+(?![\w.])", ABSURD_INTEGERS
        elif kind == 1:
            pattern, choices = r"\b(?:" + "|".join(TYPES) + r")\b", TYPES
        elif kind == 2:
            pattern, choices = r"\b(?:" + "|".join(KEYWORDS) + r")\b", KEYWORDS
        elif kind == 3:
            pattern, choices = r"\?", ABSURD_INTEGERS
        elif kind == 4:
            pattern, choices = r"\S+", [""]
        else:
            pattern, choices = r"[<>(),:=]", ["", ">", "<", ",", "(", ")"]
        spots = [m.span() for m in re.finditer(pattern, text)]
        if not spots:
            continue
        begin, end = rng.choice(spots)
        text = text[:begin] + rng.choice(choices) + text[end:]
    return text


def main():
    fp8_opt, broken_path, valid_path, workdir = sys.argv[1:5]
    seed = int(os.environ.get("FP8_FUZZ_SEED", "1"))
    count = int(os.environ.get("FP8_FUZZ_COUNT", "150"))
    os.makedirs(workdir, exist_ok=True)

    cases = []  # (name, text, may the input be valid?)
    with open(broken_path) as f:
        chunks = re.split(r"^// -----$", f.read(), flags=re.M)
    for i, chunk in enumerate(chunks):
        cases.append((f"broken-{i}", chunk, False))

    with open(valid_path) as f:
        valid = "\n".join(line for line in f.read().splitlines()
                          if not line.lstrip().startswith("//"))
    lines = valid.splitlines(keepends=True)
    offset = 0
    for i, line in enumerate(lines):
        # A cut inside a line leaves a function (or its header) open.
        if i % 3 == 0 and len(line.strip()) > 2:
            cut = offset + len(line) // 2
            cases.append((f"truncated-{i}", valid[:cut], False))
        offset += len(line)

    rng = random.Random(seed)
    for i in range(count):
        cases.append((f"mutant-{seed}-{i}", mutate(rng, valid), True))
    garbage = bytes(rng.randrange(256) for _ in range(512))
    cases.append(("garbage", garbage.decode("latin-1"), False))

    def check(case):
        name, text, may_be_valid = case
        path = os.path.join(workdir, name + ".mlir")
        with open(path, "w", encoding="latin-1", errors="replace") as f:
            f.write(text)
        code, stderr = run(fp8_opt, path)
        if code == 0 and may_be_valid:
            return None
        if code != 1:
            return f"{path}: exit code {code} (expected 1)\n{stderr[-2000:]}"
        if "error:" not in stderr:
            return f"{path}: exit code 1 without a diagnostic"
        return None

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        failures = [f for f in pool.map(check, cases) if f]
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(cases)} inputs, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
