#!/usr/bin/env python3
"""Feeds every tool of the toolkit hostile input and checks the outcome.

  hostile-input.py BIN_DIR SRC_ROOT WORKDIR

Each case runs one tool and names the exit codes it may end with (the
documented ones: 0 ok, 1 error, 2 usage). A case fails when the tool
  - ends on a signal (SIGSEGV, SIGFPE, SIGABRT from an abort or an
    uncaught exception, a sanitizer's abort),
  - runs past the time limit (a hang, e.g. on a FIFO),
  - ends with another exit code than the case allows,
  - ends non-zero without a diagnostic on stderr, or
  - prints a sanitizer report, "terminate called" or LLVM's crash banner.
Some cases check more (nothing written outside --outputs; a warning when
the kernel cache is not trusted).

The classes: deep nesting (MLIR and JSON), size overflow, hostile plan
fields (targeted and mutated at random), hostile buffer names, special
files in place of every file argument, hostile kernel-cache directories and
entries, models (the examples mutated at random) through the pipeline, .npy
headers, kernel specs and tuning databases mutated at random, usage errors
and invalid environment variables. The seed and the number of random plan
mutants come from FP8_FUZZ_SEED / FP8_FUZZ_COUNT (defaults 1 and 120; half
as many models, a third as many specs, a quarter as many tuning databases).

The last lines are a table of the classes, the inputs tried and the
outcomes, then "N inputs, F failures".
"""

import collections
import copy
import json
import os
import random
import re
import shutil
import stat
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

TIME_LIMIT = 120  # seconds; the sanitizer build is several times slower
BAD_MARKERS = ["AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer",
               "runtime error:", "terminate called", "PLEASE submit a bug report",
               "Stack dump:"]


class Case:
    def __init__(self, cls, tool, args, allowed, env=None, check=None, note=""):
        self.cls, self.tool, self.args = cls, tool, args
        self.allowed, self.env, self.check, self.note = allowed, env or {}, check, note


def run_case(bin_dir, case):
    env = dict(os.environ)
    env.update(case.env)
    for k, v in case.env.items():
        if v is None:
            env.pop(k, None)
    argv = [os.path.join(bin_dir, case.tool)] + case.args
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=env, timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        return "hang", f"no exit within {TIME_LIMIT} s"
    err = proc.stderr.decode("utf-8", "replace")
    code = proc.returncode
    if code < 0:
        return f"signal {-code}", err[-1500:]
    for marker in BAD_MARKERS:
        if marker in err:
            return f"exit {code} with '{marker}'", err[-1500:]
    if code not in case.allowed:
        return f"exit {code} (expected {sorted(case.allowed)})", err[-1500:]
    if code != 0 and not err.strip():
        return f"exit {code} without a diagnostic", ""
    if case.check:
        problem = case.check(code, err)
        if problem:
            return "check failed", problem
    return None, f"exit {code}"


def write(path, data, mode="w"):
    with open(path, mode) as f:
        f.write(data)
    return path


def main():
    bin_dir, src_root, work = sys.argv[1:4]
    seed = int(os.environ.get("FP8_FUZZ_SEED", "1"))
    count = int(os.environ.get("FP8_FUZZ_COUNT", "120"))
    rng = random.Random(seed)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    w = lambda *p: os.path.join(work, *p)
    tools = set(os.listdir(bin_dir))
    have = lambda t: t in tools
    cases = []

    # Inputs: a small plan with every kind of step, compiled here.
    small_mlir = os.path.join(src_root, "test/tools/fp8-run/Inputs/small.mlir")
    compiled = subprocess.run([os.path.join(bin_dir, "fp8-opt"), small_mlir,
                               "--fp8-compile=arch=sm_90a"], check=True,
                              capture_output=True).stdout
    plan_text = subprocess.run([os.path.join(bin_dir, "fp8-translate"), "--fp8-to-plan"],
                               input=compiled, check=True, capture_output=True).stdout
    write(w("small.plan.json"), plan_text, "wb")
    plan = json.loads(plan_text)
    dims = ["--dim", "M=8", "--dim", "M2=8"]
    run_cpu = lambda p, *extra: [p, "--cpu", "--no-outputs"] + dims + list(extra)
    valid_mlir = small_mlir
    spec = next(s["spec"] for s in plan["steps"] if s["kind"] == "gemm")
    write(w("spec.json"), json.dumps(spec))
    os.makedirs(w("dir"))
    os.mkfifo(w("fifo"))
    write(w("empty"), "")
    write(w("garbage"), bytes(rng.randrange(256) for _ in range(4096)), "wb")
    os.symlink("/dev/zero", w("zero-link"))
    special = {"directory": w("dir"), "/dev/zero": "/dev/zero", "FIFO": w("fifo"),
               "missing": w("missing"), "empty": w("empty"), "garbage": w("garbage"),
               "symlink to /dev/zero": w("zero-link")}

    # --- deep nesting ------------------------------------------------------
    deep = {
        "modules": lambda n: "module {" * n + "}" * n,
        "dictionaries": lambda n: "func.func private @f() attributes {a = " + "{a = " * n + "}" * n + "}",
        "arrays": lambda n: "func.func private @f() attributes {a = " + "[" * n + "]" * n + "}",
        "tensor<": lambda n: "func.func private @f() -> " + "tensor<" * n + "f32" + ">" * n,
        "parentheses": lambda n: "func.func private @f() -> " + "(" * n + "f32" + ")" * n,
        "affine maps": lambda n: "#m = affine_map<(d0) -> (" + "(" * n + "d0" + ")" * n + ")>",
        "locations": lambda n: "func.func private @f() loc(" + "callsite(" * n + "\"a\"" + " at \"b\")" * n + ")",
    }
    for name, make in deep.items():
        for n in (2000, 200000):
            path = write(w(f"deep-{name.strip('<')}-{n}.mlir"), make(n))
            cases.append(Case("deep nesting (MLIR)", "fp8-opt", [path], {1}, note=f"{name} x{n}"))
            cases.append(Case("deep nesting (MLIR)", "fp8-translate", ["--fp8-to-plan", path], {1},
                              note=f"{name} x{n}"))
    deep_json = "[" * 200000 + "]" * 200000
    bad_plan = json.dumps(plan).replace('"spec": {', '"spec": {"deep": ' + deep_json + ", ", 1)
    write(w("deep-spec.plan.json"), bad_plan)
    cases.append(Case("deep nesting (JSON)", "fp8-run", run_cpu(w("deep-spec.plan.json")), {1},
                      note="a spec 200,000 arrays deep"))
    write(w("deep.json"), deep_json)
    cases.append(Case("deep nesting (JSON)", "fp8-run", run_cpu(w("deep.json")), {1}, note="a plan"))
    if have("fp8-codegen"):
        cases.append(Case("deep nesting (JSON)", "fp8-codegen", ["--spec", w("deep.json")], {1, 2},
                          note="--spec"))
        cases.append(Case("deep nesting (JSON)", "fp8-codegen", ["--n", "256", "--k", "512", "--tile",
                                                                 "[" * 100000], {1, 2}, note="--tile"))
    if have("fp8-bench"):
        cases.append(Case("deep nesting (JSON)", "fp8-bench", ["--shapes", w("deep.json")], {2},
                          note="--shapes"))
    if have("fp8-tune"):
        cases.append(Case("deep nesting (JSON)", "fp8-tune",
                          ["--shapes", w("deep.json"), "--compile-only"], {2}, note="--shapes"))
        cases.append(Case("deep nesting (JSON)", "fp8-tune",
                          ["--plan", w("deep.json"), "--compile-only"], {2}, note="--plan"))
    cases.append(Case("deep nesting (JSON)", "fp8-opt",
                      [valid_mlir, f"--fp8-compile=arch=sm_90a tuning-db={w('deep.json')}"], {1},
                      note="tuning database"))

    # --- size overflow -------------------------------------------------------
    for m in ["0", "-1", "2147483648", "1099511627776", "4503599627370496",
              "9223372036854775807", "18446744073709551616", "99999999999999999999",
              "1e3", "0x10", " 8", "8 ", ""]:
        cases.append(Case("size overflow", "fp8-run",
                          [w("small.plan.json"), "--cpu", "--no-outputs", "--dim", f"M={m}",
                           "--dim", "M2=8"], {1, 2}, note=f"--dim M='{m}'"))
    huge = copy.deepcopy(plan)
    for b in huge["buffers"]:
        if b["name"] == "arg2":
            b["shape"] = [4294967296, 4294967296]
    write(w("huge-static.plan.json"), json.dumps(huge))
    cases.append(Case("size overflow", "fp8-run", run_cpu(w("huge-static.plan.json")), {1},
                      note="static shape [2^32, 2^32]"))
    if have("fp8-numerics"):
        for args in (["quantize", "--shape", "99999x99999"],
                     ["quantize", "--shape", "4294967296x4294967296"],
                     ["quantize", "--shape", "-1x5"],
                     ["gemm", "--m", "9223372036854775807", "--n", "128", "--k", "128"],
                     ["gemm", "--m", "4294967296", "--n", "4294967296", "--k", "128"]):
            cases.append(Case("size overflow", "fp8-numerics", args, {1, 2}, note=" ".join(args)))
        # A block wider than the tensor is the whole dimension (no allocation
        # by the block's size).
        args = ["quantize", "--shape", "128x128", "--granularity", "2147483648x1"]
        cases.append(Case("size overflow", "fp8-numerics", args, {0}, note=" ".join(args)))
    if have("fp8-codegen"):
        for n, k in (("1099511627776", "512"), ("256", "99999999999999999999"), ("0", "512")):
            cases.append(Case("size overflow", "fp8-codegen", ["--n", n, "--k", k], {1, 2},
                              note=f"--n {n} --k {k}"))
    if have("fp8-bench"):
        cases.append(Case("size overflow", "fp8-bench", ["--m", "99999999999999999999"], {2},
                          note="--m 10^20"))
    if have("fp8-tune"):
        for shape in ("99999999999999999999x128x128", "128x4294967296x128", "-1x128x128",
                      "128x128x0"):
            cases.append(Case("size overflow", "fp8-tune", ["--shape", shape, "--compile-only"],
                              {2}, note=f"--shape {shape}"))

    # --- hostile plan fields: targeted ---------------------------------------
    def plan_case(note, mutate, allowed=frozenset({1}), extra=(), base=None, args=None):
        p = copy.deepcopy(plan if base is None else base)
        mutate(p)
        path = write(w(f"plan-{len(cases)}.json"), json.dumps(p))
        run = run_cpu(path, *extra) if args is None else [path] + args
        cases.append(Case("hostile plan fields", "fp8-run", run, set(allowed), note=note))

    gemm_index = next(i for i, s in enumerate(plan["steps"]) if s["kind"] == "gemm")

    def set_tile(field, value):
        def f(p):
            p["steps"][gemm_index]["spec"]["tile"][field] = value
        return f
    tile_fields = list(plan["steps"][gemm_index]["spec"].get("tile", {}).keys())
    for field in tile_fields:
        if isinstance(plan["steps"][gemm_index]["spec"]["tile"][field], bool):
            values = (1, 0, "true", None, [])
        else:
            values = (0, -1, 4294967424, 2**63, 128.5, True, "128", None, [], 1e308)
        for value in values:
            plan_case(f"tile.{field} = {json.dumps(value)}", set_tile(field, value))
    for key in ("n", "k", "m"):
        if key in plan["steps"][gemm_index]["spec"]:
            for value in (0, -7, 4294967424, 128.5, False):
                def f(p, key=key, value=value):
                    p["steps"][gemm_index]["spec"][key] = value
                plan_case(f"spec.{key} = {json.dumps(value)}", f)
    plan_case("format = 1.0", lambda p: p.__setitem__("format", 1.0))
    plan_case("format = true", lambda p: p.__setitem__("format", True))
    plan_case("buffers = {}", lambda p: p.__setitem__("buffers", {}))
    plan_case("steps[0] = 7", lambda p: p["steps"].__setitem__(0, 7))
    plan_case("a buffer's shape disagrees with its step",
              lambda p: next(b for b in p["buffers"] if b["name"] == "arg2")
              .__setitem__("shape", [256, 512]))
    plan_case("batch = 2.5", lambda p: p["steps"][gemm_index].__setitem__("batch", 2.5))
    plan_case("runtime_tile = \"yes\"",
              lambda p: p["steps"][gemm_index].__setitem__("runtime_tile", "yes"))
    plan_case("history = 1e9",
              lambda p: next(b for b in p["buffers"] if b["role"] == "state")
              .__setitem__("history", 1e9))
    plan_case("history = 2^40",
              lambda p: next(b for b in p["buffers"] if b["role"] == "state")
              .__setitem__("history", 2**40))
    plan_case("constant data not base64",
              lambda p: next(b for b in p["buffers"] if b["role"] == "constant")
              .__setitem__("data", "!!!"))
    plan_case("dims = [\"M\", \"M\"]", lambda p: p.__setitem__("dims", ["M", "M", "M2"]))
    # An MoE plan (permute, grouped GEMMs, unpermute): its own fields.
    moe_mlir = os.path.join(src_root, "test/tools/fp8-run/Inputs/moe-small.mlir")
    moe_text = subprocess.run([os.path.join(bin_dir, "fp8-translate"), "--fp8-to-plan"],
                              input=subprocess.run(
                                  [os.path.join(bin_dir, "fp8-opt"), moe_mlir,
                                   "--fp8-compile=arch=sm_90a"], check=True,
                                  capture_output=True).stdout,
                              check=True, capture_output=True).stdout
    moe = json.loads(moe_text)

    def moe_case(note, mutate):
        plan_case("MoE: " + note, mutate, base=moe,
                  args=["--cpu", "--no-outputs", "--dim", "M=5"])
    step_of = lambda p, kind: next(st for st in p["steps"] if st["kind"] == kind)
    rows_buffer = lambda p: next(b for b in p["buffers"] if b["shape"][:1] == ["2*M+12"])
    for value in [0, -1, 2**40, "4", 4.0, 1025]:
        moe_case(f"align = {json.dumps(value)}",
                 lambda p, v=value: step_of(p, "permute").__setitem__("align", v))
    for dim in ["0*M", "2097152*M", "M+-1", "2*M+1099511627777", "ceildiv(2*M+12,0)",
                "2**M", "*M", "2*M+", "2*M+12+1", "ceildiv(,4)"]:
        moe_case(f"dimension \"{dim}\"",
                 lambda p, d=dim: rows_buffer(p)["shape"].__setitem__(0, d))
    moe_case("the rows' padding disagrees with align",
             lambda p: step_of(p, "permute").__setitem__("align", 3))
    moe_case("offsets [1]", lambda p: next(
        b for b in p["buffers"] if b["shape"] == [5]).__setitem__("shape", [1]))
    moe_case("offsets [2000]", lambda p: next(
        b for b in p["buffers"] if b["shape"] == [5]).__setitem__("shape", [2000]))
    moe_case("ids of f32", lambda p: next(
        b for b in p["buffers"] if b["dtype"] == "i32" and b["role"] == "input")
        .__setitem__("dtype", "f32"))
    moe_case("a grouped GEMM without its offsets",
             lambda p: next(st for st in p["steps"] if st["kind"] == "gemm"
                            and st["phase"] == "run")["inputs"].pop())
    moe_case("align on a gemm step",
             lambda p: next(st for st in p["steps"] if st["kind"] == "gemm")
             .__setitem__("align", 4))
    moe_case("reference experts = 0",
             lambda p: next(r for r in p["reference"] if r["op"] == "permute")
             .__setitem__("experts", 0))
    moe_case("reference experts = 2^40",
             lambda p: next(r for r in p["reference"] if r["op"] == "unpermute")
             .__setitem__("experts", 2**40))
    moe_case("unpermute weights of bf16", lambda p: next(
        b for b in p["buffers"] if b["name"] == step_of(p, "unpermute")["inputs"][2])
        .__setitem__("dtype", "bf16"))

    # A K-grouped plan (the experts' weight gradients): its step and reference.
    wgrad_mlir = os.path.join(src_root, "test/tools/fp8-run/Inputs/moe-wgrad-small.mlir")
    wgrad = json.loads(subprocess.run(
        [os.path.join(bin_dir, "fp8-translate"), "--fp8-to-plan"],
        input=subprocess.run([os.path.join(bin_dir, "fp8-opt"), wgrad_mlir,
                              "--fp8-compile=arch=sm_90a"], check=True,
                             capture_output=True).stdout,
        check=True, capture_output=True).stdout)

    def wgrad_case(note, mutate):
        plan_case("K-grouped: " + note, mutate, base=wgrad,
                  args=["--cpu", "--no-outputs", "--dim", "M=384"])
    wgrad_gemm = lambda p: step_of(p, "gemm")
    wgrad_ref = lambda p: p["reference"][0]
    for value in [-2, 0, "?", 1.5]:
        wgrad_case(f"spec.k = {json.dumps(value)}",
                   lambda p, v=value: wgrad_gemm(p)["spec"].__setitem__("k", v))
    wgrad_case("spec.k = -1 on a dense GEMM",
               lambda p: wgrad_gemm(p)["spec"].__setitem__("kind", "dense"))
    wgrad_case("accumulate = true",
               lambda p: wgrad_gemm(p)["spec"].__setitem__("accumulate", True))
    wgrad_case("groups = 4 (the result holds 5)",
               lambda p: wgrad_gemm(p)["spec"].__setitem__("groups", 4))
    wgrad_case("a result of rank 2", lambda p: next(
        b for b in p["buffers"] if b["role"] == "output").__setitem__("shape", [256, 384]))
    wgrad_case("offsets [5]", lambda p: next(
        b for b in p["buffers"] if b["dtype"] == "i32").__setitem__("shape", [5]))
    for value in ["grouped", "dense", 3, None]:
        wgrad_case(f"reference form = {json.dumps(value)}",
                   lambda p, v=value: wgrad_ref(p).__setitem__("form", v))
    wgrad_case("reference without a_layout",
               lambda p: wgrad_ref(p).pop("a_layout"))
    wgrad_case("reference a_layout = k_major (A [R, M] read as [M, R])",
               lambda p: wgrad_ref(p).__setitem__("a_layout", "k_major"))
    # Its quantizes write their codes and scales transposed.
    wgrad_quant = lambda p: step_of(p, "quantize")["spec"]
    for value in ["yes", 1, None, False]:
        wgrad_case(f"quantize transposed = {json.dumps(value)}",
                   lambda p, v=value: wgrad_quant(p).__setitem__("transposed", v))
    wgrad_case("a transposed quantize of 1x128 blocks",
               lambda p: wgrad_quant(p).__setitem__("granularity", "1x128"))

    # The feed-forward block with its GEMM results quantized in their
    # epilogues: an interleave step and a GEMM step with an epilogue.
    fused = json.loads(subprocess.run(
        [os.path.join(bin_dir, "fp8-translate"), "--fp8-to-plan"],
        input=subprocess.run([os.path.join(bin_dir, "fp8-opt"),
                              os.path.join(src_root, "examples/mlp.mlir"),
                              "--fp8-compile=arch=sm_90a fuse-epilogue=true"],
                             check=True, capture_output=True).stdout,
        check=True, capture_output=True).stdout)

    def fused_case(note, mutate):
        plan_case("fused epilogue: " + note, mutate, base=fused,
                  args=["--compile-only", "--dim", "M=3"])
    fused_gemm = lambda p: next(st for st in p["steps"] if st["kind"] == "gemm"
                                and "epilogue" in st["spec"])
    epilogue = lambda p: fused_gemm(p)["spec"]["epilogue"]
    for value in [0, -128, 100, 2**40, "128", 1.5, None]:
        fused_case(f"block = {json.dumps(value)}",
                   lambda p, v=value: step_of(p, "interleave").__setitem__("block", v))
    fused_case("block on a quantize step",
               lambda p: step_of(p, "quantize").__setitem__("block", 128))
    fused_case("an interleave of one input",
               lambda p: step_of(p, "interleave")["inputs"].pop())
    for value in [-8, 100, 65536, 2**40, 64.5, "128", None]:
        fused_case(f"pair_block = {json.dumps(value)}",
                   lambda p, v=value: epilogue(p).__setitem__("pair_block", v))
    for value in ["bf16", "ue8m0", 7, None]:
        fused_case(f"epilogue format = {json.dumps(value)}",
                   lambda p, v=value: epilogue(p).__setitem__("format", v))
    for value in ["128x128", "per_tensor", "1x0", "1x-8", "x"]:
        fused_case(f"epilogue granularity = {json.dumps(value)}",
                   lambda p, v=value: epilogue(p).__setitem__("granularity", v))
    fused_case("an epilogue program of one input",
               lambda p: epilogue(p)["program"]["inputs"].pop())
    fused_case("an epilogue program of f32 inputs",
               lambda p: epilogue(p)["program"].__setitem__("inputs", ["f32", "f32"]))
    fused_case("an epilogue program = []",
               lambda p: epilogue(p).__setitem__("program", []))
    fused_case("a fused GEMM with one output",
               lambda p: fused_gemm(p)["outputs"].pop())
    fused_case("a fused GEMM accumulating into C",
               lambda p: fused_gemm(p)["spec"].__setitem__("accumulate", True))

    cases.append(Case("hostile plan fields", "fp8-run", [w("small.plan.json"), "--compile-only",
                                                         "--sm-count", "0"], {1, 2},
                      note="--sm-count 0"))

    # --- hostile plan fields: random mutants ---------------------------------
    def paths(node, prefix=()):
        if isinstance(node, dict):
            for k, v in node.items():
                yield prefix + (k,), v
                yield from paths(v, prefix + (k,))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                yield prefix + (i,), v
                yield from paths(v, prefix + (i,))
    leaves = [p for p, v in paths(plan) if not isinstance(v, (dict, list))
              and not (len(p) >= 2 and p[-1] == "data")]
    replacements = [0, -1, 1, 3, 127, 4294967424, 2**63 - 1, 2**64, 0.5, 128.0, 1e308, True,
                    False, None, "", "x", "../../x", "f8E4M3FN", "sm_90a", "gemm", [], {}]

    def json_mutant(doc, leaves, values):
        """doc with one to three of its leaves replaced by one of `values` or
        deleted; and a note of what changed."""
        d, notes = copy.deepcopy(doc), []
        for _ in range(rng.randint(1, 3)):
            target, node = rng.choice(leaves), d
            try:
                for k in target[:-1]:
                    node = node[k]
                if rng.random() < 0.15 and isinstance(node, dict):
                    del node[target[-1]]
                    notes.append("del " + "/".join(map(str, target)))
                else:
                    value = rng.choice(values)
                    node[target[-1]] = value
                    notes.append("/".join(map(str, target)) + "=" + json.dumps(value))
            except (KeyError, IndexError, TypeError):
                pass
        return d, "; ".join(notes)
    for i in range(count):
        p, note = json_mutant(plan, leaves, replacements)
        path = write(w(f"mutant-{seed}-{i}.json"), json.dumps(p))
        # A mutant may still be a valid plan (0); never anything else.
        cases.append(Case("hostile plan fields (random)", "fp8-run", run_cpu(path), {0, 1},
                          note=note))

    # --- hostile buffer names --------------------------------------------------
    out_root = w("names")
    os.makedirs(out_root)
    for name in ("../../escaped", "a/b", "", ".", "..", "x" * 300, "a b", "-rf", "r\u00e9sultat",
                 "result0\u0000"):
        p = copy.deepcopy(plan)
        old = p["outputs"][0]
        text = json.dumps(p).replace(f'"{old}"', json.dumps(name))
        path = write(w(f"name-{len(cases)}.json"), text)
        outdir = os.path.join(out_root, f"out-{len(cases)}")

        def outside(code, err, outdir=outdir):
            stray = [f for f in os.listdir(out_root) if not f.startswith("out-")]
            return f"files written outside --outputs: {stray}" if stray else None
        cases.append(Case("hostile buffer names", "fp8-run",
                          [path, "--cpu", "--outputs", outdir] + dims, {1}, check=outside,
                          note=repr(name)[:40]))

    # --- special files -------------------------------------------------------
    for kind, path in special.items():
        # An empty file is an empty module.
        cases.append(Case("special files", "fp8-opt", [path], {0, 1} if kind == "empty" else {1},
                          note=f"input: {kind}"))
        cases.append(Case("special files", "fp8-translate", ["--fp8-to-plan", path], {1},
                          note=f"input: {kind}"))
        cases.append(Case("special files", "fp8-run", run_cpu(path), {1}, note=f"plan: {kind}"))
        cases.append(Case("special files", "fp8-opt",
                          [valid_mlir, f"--fp8-compile=arch=sm_90a tuning-db={path}"], {1},
                          note=f"tuning database: {kind}"))
        if have("fp8-codegen"):
            cases.append(Case("special files", "fp8-codegen", ["--spec", path], {1, 2},
                              note=f"--spec: {kind}"))
        if have("fp8-numerics"):
            cases.append(Case("special files", "fp8-numerics", ["quantize", "--input", path], {1, 2},
                              note=f"--input: {kind}"))
        if have("fp8-bench"):
            cases.append(Case("special files", "fp8-bench", ["--shapes", path], {2},
                              note=f"--shapes: {kind}"))
        if have("fp8-tune"):
            cases.append(Case("special files", "fp8-tune", ["--shapes", path, "--compile-only"],
                              {2}, note=f"--shapes: {kind}"))
            cases.append(Case("special files", "fp8-tune", ["--plan", path, "--compile-only"],
                              {2}, note=f"--plan: {kind}"))
        # --inputs DIR whose arg0.npy is the special file.
        inputs = w(f"inputs-{len(cases)}")
        os.makedirs(inputs)
        subprocess.run([os.path.join(bin_dir, "fp8-run"), w("small.plan.json"), "--cpu",
                        "--no-outputs", "--save-inputs", inputs] + dims,
                       capture_output=True, check=True)
        os.remove(os.path.join(inputs, "arg0.npy"))
        if kind == "directory":
            os.makedirs(os.path.join(inputs, "arg0.npy"))
        elif kind == "FIFO":
            os.mkfifo(os.path.join(inputs, "arg0.npy"))
        elif kind != "missing":
            os.symlink(path, os.path.join(inputs, "arg0.npy"))
        cases.append(Case("special files", "fp8-run",
                          [w("small.plan.json"), "--cpu", "--no-outputs", "--inputs", inputs] + dims,
                          {1}, note=f"--inputs DIR/arg0.npy: {kind}"))
    # --outputs DIR whose result0.npy is a directory.
    outdir = w("outputs-blocked")
    os.makedirs(os.path.join(outdir, "result0.npy"))
    cases.append(Case("special files", "fp8-run",
                      [w("small.plan.json"), "--cpu", "--outputs", outdir] + dims, {1},
                      note="--outputs DIR/result0.npy: directory"))

    # --- hostile kernel caches -------------------------------------------------
    # Each case compiles the small plan's kernels (no GPU needed). Untrusted
    # directories must be refused with a warning and the kernels compiled in
    # memory; bad entries refused and recompiled. Exit 0 either way.
    compile_only = [w("small.plan.json"), "--compile-only"] + dims

    def warns(code, err):
        return None if "warning" in err else "no warning on stderr"
    populated = w("cache-good")
    subprocess.run([os.path.join(bin_dir, "fp8-run")] + compile_only,
                   env=dict(os.environ, FP8_CACHE_DIR=populated), capture_output=True, check=True)
    entries = sorted(os.path.join(r, f) for r, _, fs in os.walk(populated) for f in fs)

    def cache_copy(name):
        dst = w(name)
        shutil.copytree(populated, dst, symlinks=True)
        return dst, [os.path.join(dst, os.path.relpath(e, populated)) for e in entries]

    write(w("cache-file"), "not a directory")
    cases.append(Case("hostile kernel cache", "fp8-run", compile_only, {0},
                      env={"FP8_CACHE_DIR": w("cache-file")}, note="FP8_CACHE_DIR is a file"))
    cases.append(Case("hostile kernel cache", "fp8-run", compile_only, {0},
                      env={"FP8_CACHE_DIR": w("fifo")}, note="FP8_CACHE_DIR is a FIFO"))
    cases.append(Case("hostile kernel cache", "fp8-run", compile_only, {0},
                      env={"FP8_CACHE_DIR": "/dev/null"}, note="FP8_CACHE_DIR is /dev/null"))
    d, _ = cache_copy("cache-world-writable")
    os.chmod(d, 0o777)
    cases.append(Case("hostile kernel cache", "fp8-run", compile_only, {0}, check=warns,
                      env={"FP8_CACHE_DIR": d}, note="directory writable by others"))
    d, es = cache_copy("cache-shard-writable")
    os.chmod(os.path.dirname(es[0]), 0o777)
    cases.append(Case("hostile kernel cache", "fp8-run", compile_only, {0}, check=warns,
                      env={"FP8_CACHE_DIR": d}, note="a shard writable by others"))
    if os.geteuid() == 0:
        d, es = cache_copy("cache-foreign")
        os.chown(d, 65534, 65534)
        cases.append(Case("hostile kernel cache", "fp8-run", compile_only, {0}, check=warns,
                          env={"FP8_CACHE_DIR": d}, note="directory of another user"))
        d, es = cache_copy("cache-foreign-entry")
        os.chown(es[0], 65534, 65534)
        cases.append(Case("hostile kernel cache", "fp8-run", compile_only, {0}, check=warns,
                          env={"FP8_CACHE_DIR": d}, note="an entry of another user"))
    corruptions = {
        "entry is a directory": lambda e: (os.remove(e), os.makedirs(e)),
        "entry is a FIFO": lambda e: (os.remove(e), os.mkfifo(e)),
        "entry is a symlink to /dev/zero": lambda e: (os.remove(e), os.symlink("/dev/zero", e)),
        "entry truncated": lambda e: os.truncate(e, os.path.getsize(e) // 2),
        "entry empty": lambda e: os.truncate(e, 0),
        "entry of garbage": lambda e: write(e, bytes(rng.randrange(256) for _ in range(9000)), "wb"),
        "entry with a flipped byte": lambda e: flip(e),
        "a valid entry of another kernel": lambda e: shutil.copyfile(
            next(x for x in entries if os.path.basename(x) != os.path.basename(e)), e),
        "shard is a file": lambda e: (shutil.rmtree(os.path.dirname(e)),
                                      write(os.path.dirname(e), "x")),
        "shard is a symlink": lambda e: (shutil.rmtree(os.path.dirname(e)),
                                         os.symlink(w("dir"), os.path.dirname(e))),
    }

    def flip(e):
        data = bytearray(open(e, "rb").read())
        data[len(data) // 2] ^= 0x40
        write(e, bytes(data), "wb")
    for note, corrupt in corruptions.items():
        d, es = cache_copy("cache-" + note.replace(" ", "-").replace("/", "_"))
        corrupt(es[0])
        cases.append(Case("hostile kernel cache", "fp8-run", compile_only, {0}, check=warns,
                          env={"FP8_CACHE_DIR": d}, note=note))

    # --- hostile models: random mutants of the examples ---------------------------
    # Numbers (one occurrence, or every occurrence of one value, so that
    # shapes stay consistent and the mutant reaches the passes), element
    # types, granularities, dynamic dimensions made static, lines deleted
    # or repeated; compiled for either target, with and without epilogue
    # fusion. A mutant may still be a valid model (0).
    examples = sorted(os.path.join(src_root, "examples", f)
                      for f in os.listdir(os.path.join(src_root, "examples"))
                      if f.endswith(".mlir"))
    number = r"(?<![A-Za-z_%#0-9.])\d+(?![0-9.])"
    numbers = ["0", "1", "2", "7", "8", "12", "96", "127", "129", "130", "4100", "131072",
               "2147483647", "2147483648", "9223372036854775807", "99999999999999999999"]
    elements = ["f8E4M3FN", "f8E5M2", "bf16", "f16", "f32", "i8", "f8E4M3FNUZ", "f8E8M0FNU"]
    granularities = ["<per_tensor>", "<per_row>", "<per_column>", "<mx>", "<1x128>",
                     "<128x128>", "<128x1>", "<0x128>", "<1x7>", "<3x5>", "<per_col>"]

    def mutate_model(text):
        notes = []
        for _ in range(rng.randint(1, 3)):
            r = rng.random()
            if r < 0.35:
                spots = list(re.finditer(number, text))
                if spots:
                    m, v = rng.choice(spots), rng.choice(numbers)
                    text = text[:m.start()] + v + text[m.end():]
                    notes.append(f"number at {m.start()} = {v}")
            elif r < 0.55:
                values = sorted(set(m.group(0) for m in re.finditer(number, text)))
                if values:
                    old, v = rng.choice(values), rng.choice(numbers)
                    text = re.sub(r"(?<![A-Za-z_%#0-9.])" + old + r"(?![0-9.])", v, text)
                    notes.append(f"every {old} = {v}")
            elif r < 0.68:
                spots = list(re.finditer(r"f8E4M3FN|f8E5M2|bf16|f32", text))
                if spots:
                    m, v = rng.choice(spots), rng.choice(elements)
                    text = text[:m.start()] + v + text[m.end():]
                    notes.append(f"type at {m.start()} = {v}")
            elif r < 0.8:
                spots = list(re.finditer(r"<per_tensor>|<per_row>|<per_column>|<mx>|<\d+x\d+>",
                                         text))
                if spots:
                    m, v = rng.choice(spots), rng.choice(granularities)
                    text = text[:m.start()] + v + text[m.end():]
                    notes.append(f"granularity at {m.start()} = {v}")
            elif r < 0.88:
                spots = list(re.finditer(r"\?", text))
                if spots:
                    m, v = rng.choice(spots), rng.choice(["1", "7", "4096"])
                    text = text[:m.start()] + v + text[m.end():]
                    notes.append(f"dynamic at {m.start()} = {v}")
            else:
                lines = text.split("\n")
                k = rng.randrange(len(lines))
                if rng.random() < 0.5:
                    del lines[k]
                    notes.append(f"line {k + 1} deleted")
                else:
                    lines.insert(k, lines[k])
                    notes.append(f"line {k + 1} repeated")
                text = "\n".join(lines)
        return text, notes
    for i in range(count // 2):
        source = rng.choice(examples)
        text, notes = mutate_model(open(source).read())
        path = write(w(f"model-{i}.mlir"), text)
        options = rng.choice(["arch=sm_90a", "arch=sm_100a", "arch=sm_90a fuse-epilogue=true"])
        cases.append(Case("hostile models (random)", "fp8-opt",
                          [path, f"--fp8-compile={options}", "-o", os.devnull], {0, 1},
                          note=f"{os.path.basename(source)}: {'; '.join(notes)} [{options}]"))

    # --- hostile .npy headers ------------------------------------------------------
    def npy(header, payload):
        h = header.encode()
        h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + payload
    good = "{'descr': '<f4', 'fortran_order': False, 'shape': (64, 128), }"
    headers = [("big-endian", good.replace("<f4", ">f4"), 64 * 128 * 4),
               ("descr <f8", good.replace("<f4", "<f8"), 64 * 128 * 8),
               ("descr |u1", good.replace("<f4", "|u1"), 64 * 128),
               ("complex", good.replace("<f4", "<c8"), 64 * 128 * 8),
               ("object", good.replace("'<f4'", "'O'"), 64 * 128 * 8),
               ("Fortran order", good.replace("False", "True"), 64 * 128 * 4),
               ("fortran_order None", good.replace("False", "None"), 64 * 128 * 4),
               ("no descr", good.replace("'descr'", "'dscr'"), 64 * 128 * 4),
               ("1-d", good.replace("(64, 128)", "(64,)"), 64 * 4),
               ("0-d", good.replace("(64, 128)", "()"), 4),
               ("0 rows", good.replace("(64, 128)", "(0, 128)"), 0),
               ("negative dim", good.replace("(64, 128)", "(-1, 128)"), 64 * 128 * 4),
               ("float dim", good.replace("(64, 128)", "(64, 1e3)"), 64 * 128 * 4),
               ("dims overflow", good.replace("(64, 128)", "(9223372036854775807, 2)"), 64),
               ("huge dims", good.replace("(64, 128)", "(99999999999, 99999999999)"), 64),
               ("double comma", good.replace("(64, 128)", "(64, 128,,)"), 64 * 128 * 4),
               ("a list, not a dict", good.replace("{", "[").replace("}", "]"), 64 * 128 * 4),
               ("unterminated", good.replace("}", ""), 64 * 128 * 4),
               ("short payload", good, 64 * 128 * 4 - 1),
               ("no payload", good, 0)]
    # What fp8-numerics takes (f8 and u1 converted, N-d arrays as [rows, last
    # dim], an empty one); everything else is refused.
    readable = {"descr <f8", "descr |u1", "1-d", "0-d", "0 rows"}
    for note, header, size in headers:
        path = write(w(f"header-{len(cases)}.npy"), npy(header, bytes(size)), "wb")
        if have("fp8-numerics"):
            cases.append(Case("hostile .npy headers", "fp8-numerics",
                              ["quantize", "--input", path], {0} if note in readable else {1},
                              note=note))
    # The same as a plan's input.
    for note, header, size in headers[:8]:
        inputs = w(f"npy-inputs-{len(cases)}")
        os.makedirs(inputs)
        subprocess.run([os.path.join(bin_dir, "fp8-run"), w("small.plan.json"), "--cpu",
                        "--no-outputs", "--save-inputs", inputs] + dims,
                       capture_output=True, check=True)
        write(os.path.join(inputs, "arg0.npy"), npy(header, bytes(size)), "wb")
        cases.append(Case("hostile .npy headers", "fp8-run",
                          [w("small.plan.json"), "--cpu", "--no-outputs", "--inputs", inputs]
                          + dims, {1}, note="--inputs DIR/arg0.npy: " + note))

    # --- hostile kernel specs and tuning databases: random mutants ---------------
    def leaves_of(doc):
        return [p for p, v in paths(doc) if not isinstance(v, (dict, list))]
    json_values = replacements + ["1x128", "128x128", "per_tensor", "sm_100a", "along_m", "none"]
    if have("fp8-codegen"):
        for i in range(count // 3):
            d, note = json_mutant(spec, leaves_of(spec), json_values)
            path = write(w(f"spec-{i}.json"), json.dumps(d))
            cases.append(Case("hostile kernel specs (random)", "fp8-codegen",
                              ["--spec", path, "--emit", "info"], {0, 1}, note=note))
    tuning_db = json.load(open(os.path.join(src_root, "test/passes/Inputs/tuning-db.json")))
    for i in range(count // 4):
        d, note = json_mutant(tuning_db, leaves_of(tuning_db), json_values)
        path = write(w(f"tuning-db-{i}.json"), json.dumps(d))
        cases.append(Case("hostile tuning databases (random)", "fp8-opt",
                          [valid_mlir, f"--fp8-compile=arch=sm_90a tuning-db={path}",
                           "-o", os.devnull], {0, 1}, note=note))

    # --- usage errors and the environment -------------------------------------
    usage = [("fp8-opt", ["--frobnicate", valid_mlir]),
             ("fp8-translate", [valid_mlir]),
             ("fp8-translate", ["--fp8-to-plan", "--frobnicate", valid_mlir]),
             ("fp8-run", []),
             ("fp8-run", [w("small.plan.json"), "--frobnicate"]),
             ("fp8-run", [w("small.plan.json"), "--dim"]),
             ("fp8-run", [w("small.plan.json"), "--iters", "ten"]),
             ("fp8-run", [w("small.plan.json"), "--seed", "1x"]),
             ("fp8-run", [w("small.plan.json"), "--sm-count", "99999999999999999999"]),
             ("fp8-run", [w("small.plan.json"), "--similarity-bound", "abc"]),
             ("fp8-codegen", ["--frobnicate"]),
             ("fp8-codegen", ["--n"]),
             ("fp8-codegen", ["--n", "12x", "--k", "512"]),
             ("fp8-codegen", ["--arch", "sm_80"]),
             ("fp8-codegen", ["--n", "256", "--k", "512", "--emit", "pdf"]),
             ("fp8-numerics", []),
             ("fp8-numerics", ["frobnicate"]),
             ("fp8-numerics", ["quantize", "--frobnicate"]),
             ("fp8-numerics", ["quantize", "--shape", "12x"]),
             ("fp8-numerics", ["gemm", "--m", "1x", "--n", "8", "--k", "8"]),
             ("fp8-numerics", ["gemm", "--promotion", "abc"]),
             ("fp8-bench", ["--frobnicate"]),
             ("fp8-bench", ["--iters", "1x"]),
             ("fp8-tune", []),
             ("fp8-tune", ["--frobnicate"]),
             ("fp8-tune", ["--shape", "128x128x128", "--threads", "x"]),
             ("fp8-tune", ["--plan"])]
    for tool, args in usage:
        if have(tool):
            cases.append(Case("usage errors", tool, args, {2}, note=" ".join(args)[-60:]))
    env_tools = [("fp8-run", run_cpu(w("small.plan.json"))),
                 ("fp8-codegen", ["--n", "256", "--k", "512"]),
                 ("fp8-numerics", ["quantize", "--shape", "128x128"]),
                 ("fp8-bench", []),
                 ("fp8-tune", ["--shape", "128x256x256", "--compile-only"])]
    for name, value in (("FP8_THREADS", "abc"), ("FP8_DEVICE", "-1"),
                        ("FP8_SM90_PRODUCER_REGS", "99999"), ("FP8_JIT_DEBUG", "yes"),
                        ("FP8_SCALE_TMA", "7")):
        for tool, args in env_tools:
            if have(tool):
                cases.append(Case("environment variables", tool, args, {2},
                                  env={name: value}, note=f"{name}={value}"))

    # --- run ----------------------------------------------------------------------
    jobs = max(1, min(4, os.cpu_count() or 2))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda c: run_case(bin_dir, c), cases))
    table = collections.OrderedDict()
    failures = 0
    for case, (problem, detail) in zip(cases, results):
        row = table.setdefault(case.cls, {"inputs": 0, "tools": set(), "outcomes": collections.Counter()})
        row["inputs"] += 1
        row["tools"].add(case.tool)
        if problem:
            failures += 1
            row["outcomes"]["FAIL"] += 1
            print(f"FAIL [{case.cls}] {case.tool} {' '.join(case.args)[:200]} ({case.note}): "
                  f"{problem}\n{detail}")
        else:
            row["outcomes"][detail] += 1
            if case.cls.endswith("(random)") and detail == "exit 0":
                print(f"accepted mutant: {case.note}")
    print("| class | tools | inputs | outcomes |")
    print("|---|---|---|---|")
    for cls, row in table.items():
        outcomes = ", ".join(f"{k}: {v}" for k, v in sorted(row["outcomes"].items()))
        print(f"| {cls} | {', '.join(sorted(row['tools']))} | {row['inputs']} | {outcomes} |")
    print(f"{len(cases)} inputs, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
