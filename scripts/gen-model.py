#!/usr/bin/env python3
"""Writes an N-layer transformer graph with FP8 annotations, as MLIR.

The graph is what fp8-opt --fp8-compile takes: linalg matmuls on bf16 with an
#fp8.recipe on the function, weights marked {fp8.weight}, the token count M
dynamic. Two kinds of layer:

  dense  a Llama-style decoder layer's FP8 part:
           qkv = h Wqkv^T                       (returned: attention's input)
           h1  = h + attn_i Wo^T                (attn_i: attention's output)
           n   = c_i * h1
           h2  = h1 + down(silu(n Wg^T) * (n Wu^T))
  moe    a batched-expert FFN block on tokens already dispatched to E experts
           ([E, M, hidden]), each expert's SwiGLU FFN as batch matmuls:
           n   = c_i * h
           h2  = h + down_e(silu(n Wg_e^T) * (n Wu_e^T))  (--no-residual: no h)

c_i, 1/sqrt(i + 2) rounded down to a power of two, stands in for the
RMSNorm in front of a real FFN (the residual stream's RMS grows like
sqrt(i + 1) with fp8-run's random inputs): without it the SwiGLU branch
squares its input's scale and a stack of layers overflows (rounded to the
nearer power of two instead, 32 layers overflowed from layer 21 on). It is
an elementwise op that the pipeline fuses into the quantize; a power of two
keeps it exact in bf16 and the distinct kernels few (one per value, not per
layer).

Examples:
  scripts/gen-model.py --layers 32 > llama32.mlir
  scripts/gen-model.py --kind moe --layers 8 --experts 8 > moe8.mlir
  scripts/gen-model.py --layers 200 --hidden 256 --intermediate 512 --qkv 768
      (1000 matmuls: five a dense layer)
"""

import argparse
import math
import sys

RECIPES = {
    # DeepSeek-V3: 1x128 activations, 128x128 weights, promotion every 128.
    "deepseek": "#fp8.recipe<a = <f8E4M3FN, <1x128>>, "
                "b = <f8E4M3FN, <128x128>>, promotion_interval = 128>",
    # Per-tensor current scaling on both operands.
    "per-tensor": "#fp8.recipe<a = <f8E4M3FN, <per_tensor>>, "
                  "b = <f8E4M3FN, <per_tensor>>, promotion_interval = 128>",
    # Per-token activations, per-channel weights.
    "per-row": "#fp8.recipe<a = <f8E4M3FN, <per_row>>, "
               "b = <f8E4M3FN, <per_row>>, promotion_interval = 128>",
}


def positive(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, found {text}")
    return value


class Graph:
    """Collects arguments, body lines and results of one function."""

    def __init__(self, batch):
        self.args = []      # (name, type, attrs)
        self.lines = []
        self.results = []   # (value, type)
        self.batch = batch  # None (2-D) or the expert count
        self.count = 0

    def fresh(self, stem):
        self.count += 1
        return f"%{stem}{self.count}"

    def arg(self, name, ty, weight=False):
        self.args.append((name, ty, " {fp8.weight}" if weight else ""))
        return "%" + name

    def act(self, cols):
        lead = f"{self.batch}x" if self.batch else ""
        return f"tensor<{lead}?x{cols}xbf16>"

    def weight(self, rows, cols):
        lead = f"{self.batch}x" if self.batch else ""
        return f"tensor<{lead}{rows}x{cols}xbf16>"

    def empty(self, cols):
        e, z = self.fresh("e"), self.fresh("z")
        self.lines.append(f"{e} = tensor.empty(%m) : {self.act(cols)}")
        self.lines.append(f"{z} = linalg.fill ins(%zero : bf16) outs({e} : "
                          f"{self.act(cols)}) -> {self.act(cols)}")
        return e, z

    def matmul(self, x, k, w, n):
        _, z = self.empty(n)
        y = self.fresh("mm")
        op = "linalg.batch_matmul" if self.batch else "linalg.matmul"
        maps = "[#bx, #bwT, #by]" if self.batch else "[#x, #wT, #y]"
        self.lines.append(
            f"{y} = {op} indexing_maps = {maps} ins({x}, {w} : {self.act(k)}, "
            f"{self.weight(n, k)}) outs({z} : {self.act(n)}) -> {self.act(n)}")
        return y

    def add(self, a, b, cols):
        e, _ = self.empty(cols)
        y = self.fresh("add")
        t = self.act(cols)
        self.lines.append(f"{y} = linalg.add ins({a}, {b} : {t}, {t}) "
                          f"outs({e} : {t}) -> {t}")
        return y

    def generic(self, stem, ins, cols, args, body):
        """An elementwise linalg.generic over `ins` (all [.., M, cols])."""
        e, _ = self.empty(cols)
        y = self.fresh(stem)
        t = self.act(cols)
        idm = "#bid" if self.batch else "#id"
        ids = "[" + ", ".join([idm] * (len(ins) + 1)) + "]"
        iters = ", ".join(['"parallel"'] * (3 if self.batch else 2))
        self.lines += [
            f"{y} = linalg.generic {{indexing_maps = {ids}, iterator_types = [{iters}]}}",
            f"    ins({', '.join(ins)} : {', '.join([t] * len(ins))}) outs({e} : {t}) {{",
            "^bb0(" + ", ".join(f"%{a}: bf16" for a in args) + ", %o: bf16):",
        ] + ["  " + line for line in body] + [f"}} -> {t}"]
        return y

    def scale(self, x, c, cols):
        return self.generic("scaled", [x], cols, ["v"], [
            f"%c = arith.constant {c:.6e} : bf16",
            "%r = arith.mulf %v, %c : bf16",
            "linalg.yield %r : bf16",
        ])

    def swiglu(self, g, u, cols):
        return self.generic("swiglu", [g, u], cols, ["g", "u"], [
            "%gf = arith.extf %g : bf16 to f32",
            "%uf = arith.extf %u : bf16 to f32",
            "%one = arith.constant 1.0 : f32",
            "%ng = arith.negf %gf : f32",
            "%ex = math.exp %ng : f32",
            "%den = arith.addf %ex, %one : f32",
            "%silu = arith.divf %gf, %den : f32",
            "%prod = arith.mulf %silu, %uf : f32",
            "%r = arith.truncf %prod : f32 to bf16",
            "linalg.yield %r : bf16",
        ])

    def text(self, name, recipe):
        out = []
        out.append("#x  = affine_map<(m, n, k) -> (m, k)>")
        out.append("#wT = affine_map<(m, n, k) -> (n, k)>")
        out.append("#y  = affine_map<(m, n, k) -> (m, n)>")
        out.append("#id = affine_map<(m, n) -> (m, n)>")
        out.append("#bx  = affine_map<(b, m, n, k) -> (b, m, k)>")
        out.append("#bwT = affine_map<(b, m, n, k) -> (b, n, k)>")
        out.append("#by  = affine_map<(b, m, n, k) -> (b, m, n)>")
        out.append("#bid = affine_map<(b, m, n) -> (b, m, n)>")
        out.append("")
        args = ",\n    ".join(f"%{n}: {t}{a}" for n, t, a in self.args)
        res = ", ".join(t for _, t in self.results)
        out.append(f"func.func @{name}(\n    {args})\n    -> ({res})")
        out.append(f"    attributes {{fp8.recipe = {recipe}}} {{")
        mdim = 1 if self.batch else 0
        first = self.args[0]
        out.append(f"  %cm = arith.constant {mdim} : index")
        out.append("  %zero = arith.constant 0.0 : bf16")
        out.append(f"  %m = tensor.dim %{first[0]}, %cm : {first[1]}")
        out += ["  " + line for line in self.lines]
        vals = ", ".join(v for v, _ in self.results)
        out.append(f"  return {vals} : {res}")
        out.append("}")
        return "\n".join(out) + "\n"


def norm(layer):
    """The RMSNorm stand-in's factor for layer `layer` (see the top)."""
    return 2.0 ** -math.ceil(0.5 * math.log2(layer + 2))


def dense(args):
    g = Graph(None)
    h = g.arg("x", g.act(args.hidden))
    for i in range(args.layers):
        attn = g.arg(f"attn{i}", g.act(args.hidden))
        w_qkv = g.arg(f"w_qkv{i}", g.weight(args.qkv, args.hidden), True)
        w_o = g.arg(f"w_o{i}", g.weight(args.hidden, args.hidden), True)
        w_g = g.arg(f"w_gate{i}", g.weight(args.intermediate, args.hidden), True)
        w_u = g.arg(f"w_up{i}", g.weight(args.intermediate, args.hidden), True)
        w_d = g.arg(f"w_down{i}", g.weight(args.hidden, args.intermediate), True)
        qkv = g.matmul(h, args.hidden, w_qkv, args.qkv)
        g.results.append((qkv, g.act(args.qkv)))
        o = g.matmul(attn, args.hidden, w_o, args.hidden)
        h1 = g.add(h, o, args.hidden)
        n = g.scale(h1, norm(i), args.hidden)
        gate = g.matmul(n, args.hidden, w_g, args.intermediate)
        up = g.matmul(n, args.hidden, w_u, args.intermediate)
        s = g.swiglu(gate, up, args.intermediate)
        down = g.matmul(s, args.intermediate, w_d, args.hidden)
        h = g.add(h1, down, args.hidden)
    g.results.append((h, g.act(args.hidden)))
    return g


def moe(args):
    g = Graph(args.experts)
    h = g.arg("x", g.act(args.hidden))
    for i in range(args.layers):
        w_g = g.arg(f"w_gate{i}", g.weight(args.intermediate, args.hidden), True)
        w_u = g.arg(f"w_up{i}", g.weight(args.intermediate, args.hidden), True)
        w_d = g.arg(f"w_down{i}", g.weight(args.hidden, args.intermediate), True)
        n = g.scale(h, norm(i), args.hidden)
        gate = g.matmul(n, args.hidden, w_g, args.intermediate)
        up = g.matmul(n, args.hidden, w_u, args.intermediate)
        s = g.swiglu(gate, up, args.intermediate)
        down = g.matmul(s, args.intermediate, w_d, args.hidden)
        h = down if args.no_residual else g.add(h, down, args.hidden)
    g.results.append((h, g.act(args.hidden)))
    return g


def main():
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", choices=["dense", "moe"], default="dense")
    p.add_argument("--layers", type=positive, default=2)
    p.add_argument("--hidden", type=positive, default=256)
    p.add_argument("--intermediate", type=positive, default=512)
    p.add_argument("--qkv", type=positive, default=768,
                   help="the fused QKV projection's width (dense)")
    p.add_argument("--experts", type=positive, default=4, help="(moe)")
    p.add_argument("--no-residual", action="store_true", help="(moe)")
    p.add_argument("--recipe", choices=sorted(RECIPES), default="deepseek")
    p.add_argument("--name", default=None, help="the function's name")
    args = p.parse_args()
    g = dense(args) if args.kind == "dense" else moe(args)
    name = args.name or f"{args.kind}_{args.layers}"
    sys.stdout.write("// scripts/gen-model.py " + " ".join(sys.argv[1:]) + "\n")
    sys.stdout.write(g.text(name, RECIPES[args.recipe]))


if __name__ == "__main__":
    main()
