#!/usr/bin/env python3
"""A mixture-of-experts FFN's expert GEMMs with fp8kit.grouped_gemm, against
the same layer in BF16.

    python examples/python/moe_experts.py                      # the GPU
    python examples/python/moe_experts.py --device cpu --tokens 64 --hidden 256 --ffn 128

Each token goes to its top-k experts (softmax weights over the router's
top-k logits). The routed copies are sorted by expert, so every expert's
rows are contiguous and the group offsets are the running count of tokens
per expert (any row: no padding). The BF16 reference works from the
routing as it is (each expert's tokens picked out), so it checks the
sorting and the offsets too. The gate and up projections are one
grouped GEMM over [E, 2F, H] weights, SwiGLU runs in BF16 between, the
down projection is a second grouped GEMM over [E, H, F] weights, and the
outputs are weighted and summed back per token. Activations are quantized
1x128 and weights 128x128 (the DeepSeek-V3 recipe); the group offsets stay
on the device, so no step waits for the host.

Prints the relative error of the FP8 layer's output against BF16 (the
similarity difference DeepGEMM reports, and the relative Frobenius norm)
and, on a GPU, the time of each.
"""

import argparse
import time

import torch

import fp8kit


def route(logits, top_k):
    """The router's choice for a [T, E] logit matrix: each token's top-k
    experts [T, k] and their weights (softmax over the top-k logits)."""
    top, ids = logits.topk(top_k, dim=1)
    return ids, top.float().softmax(dim=1)


def sort_by_expert(ids, weights, experts):
    """The routed copies sorted by expert (stably: tokens in order within an
    expert): for each, the token it copies and its weight; and the experts'
    offsets [E + 1] (int32), on the device."""
    top_k = ids.shape[1]
    order = ids.flatten().argsort(stable=True)
    counts = torch.bincount(ids.flatten(), minlength=experts)
    offsets = torch.zeros(experts + 1, dtype=torch.int32, device=ids.device)
    offsets[1:] = counts.cumsum(0)
    return order // top_k, weights.flatten()[order], offsets


def combine(y, token, weight, tokens):
    """Each routed copy's output, weighted, summed back into its token."""
    out = torch.zeros(tokens, y.shape[1], dtype=torch.float32, device=y.device)
    out.index_add_(0, token, y.float() * weight[:, None])
    return out


def moe_fp8(x, ids, weights, w_gate_up, w_down, recipe):
    """The experts in FP8: the routed copies sorted by expert, two grouped
    GEMMs (weights quantized here; a model would keep them quantized)."""
    ffn = w_down.shape[2]
    token, weight, offsets = sort_by_expert(ids, weights, w_gate_up.shape[0])
    xq = fp8kit.quantize(x[token], recipe.a)
    wq = fp8kit.quantize(w_gate_up, recipe.b)
    h = fp8kit.grouped_gemm(xq.codes, xq.scales, wq.codes, wq.scales, offsets,
                            recipe)
    a = torch.nn.functional.silu(h[:, :ffn].float()) * h[:, ffn:].float()
    aq = fp8kit.quantize(a.to(torch.bfloat16), recipe.a)
    dq = fp8kit.quantize(w_down, recipe.b)
    y = fp8kit.grouped_gemm(aq.codes, aq.scales, dq.codes, dq.scales, offsets,
                            recipe)
    return combine(y, token, weight, x.shape[0])


def moe_bf16(x, ids, weights, w_gate_up, w_down):
    """The same layer in BF16, from the routing as it is: for each expert,
    the tokens that chose it (no sorting, no offsets)."""
    ffn = w_down.shape[2]
    out = torch.zeros(x.shape[0], w_down.shape[1], dtype=torch.float32,
                      device=x.device)
    for e in range(w_gate_up.shape[0]):
        token, slot = (ids == e).nonzero(as_tuple=True)
        if token.numel() == 0:
            continue
        h = x[token] @ w_gate_up[e].t()
        a = (torch.nn.functional.silu(h[:, :ffn].float())
             * h[:, ffn:].float()).to(torch.bfloat16)
        out.index_add_(0, token, (a @ w_down[e].t()).float()
                       * weights[token, slot][:, None])
    return out


def difference(x, y):
    """DeepGEMM's similarity difference: 1 - 2<x, y> / (|x|^2 + |y|^2)."""
    x, y = x.double(), y.double()
    return (1 - 2 * (x * y).sum() / (x * x + y * y).sum()).item()


def run(device="cuda", tokens=4096, hidden=2048, ffn=1024, experts=16,
        top_k=4, seed=0):
    """Builds a random layer and input; returns (difference, relative
    error, FP8 ms, BF16 ms) of the layer's output (times 0 on the CPU)."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    def randn(*shape, scale=1.0):
        return (torch.randn(*shape, generator=g) * scale).to(
            device=device, dtype=torch.bfloat16)
    x = randn(tokens, hidden)
    logits = randn(tokens, experts)
    w_gate_up = randn(experts, 2 * ffn, hidden, scale=hidden ** -0.5)
    w_down = randn(experts, hidden, ffn, scale=ffn ** -0.5)
    recipe = fp8kit.Recipe.preset("deepseek")
    ids, weights = route(logits, top_k)

    def timed(fn):
        out = fn()  # compiles the kernels on the first call
        if device != "cuda":
            return out, 0.0
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(10):
            out = fn()
        torch.cuda.synchronize()
        return out, (time.perf_counter() - start) / 10 * 1e3

    fp8, fp8_ms = timed(lambda: moe_fp8(x, ids, weights, w_gate_up, w_down,
                                        recipe))
    ref, ref_ms = timed(lambda: moe_bf16(x, ids, weights, w_gate_up, w_down))
    rel = ((fp8 - ref).norm() / ref.norm()).item()
    return difference(fp8, ref), rel, fp8_ms, ref_ms


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--tokens", type=int, default=4096)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--ffn", type=int, default=1024)
    p.add_argument("--experts", type=int, default=16)
    p.add_argument("--top-k", type=int, default=4)
    a = p.parse_args()
    diff, rel, fp8_ms, ref_ms = run(a.device, a.tokens, a.hidden, a.ffn,
                                    a.experts, a.top_k)
    print(f"{a.tokens} tokens, {a.experts} experts, top-{a.top_k}, hidden "
          f"{a.hidden}, ffn {a.ffn}: FP8 against BF16 difference {diff:.1e}, "
          f"relative error {rel:.2%}")
    if a.device == "cuda":
        print(f"time (host-timed, the quantizes included): FP8 {fp8_ms:.3f} "
              f"ms, BF16 (one matmul an expert) {ref_ms:.3f} ms")


if __name__ == "__main__":
    main()
