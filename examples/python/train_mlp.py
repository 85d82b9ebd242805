#!/usr/bin/env python3
"""Trains a small transformer-style MLP twice, in BF16 and with
fp8kit.nn.Linear (FP8 forward, dgrad and wgrad GEMMs), from the same
initial weights on the same data, and compares the loss curves.

    python examples/python/train_mlp.py                 # the GPU, 300 steps
    python examples/python/train_mlp.py --device cpu --dim 128 --steps 200

The model: an input projection, `--blocks` pre-norm residual blocks
(RMSNorm, up-projection to 4x, GELU, down-projection), a head. Two tasks,
each learning a fixed random teacher of the same shape:
  lm (default): next-token prediction, as language models train: the
    context is two tokens (two embedding tables, summed), the head gives
    logits over --vocab tokens, the targets are sampled from the teacher's
    softmax; cross-entropy, whose floor is the teacher's entropy.
  regress: the teacher's outputs on Gaussian inputs (MSE). The loss goes
    toward zero, so its relative gap measures FP8's noise floor rather than
    how well the model trained. Master weights are FP32 for both runs; activations BF16. The
BF16 run's linears compute in BF16 (torch.nn.functional.linear on BF16
copies of the weights), the FP8 run's quantize as the recipe says (default
the DeepSeek-V3 recipe, E5M2 gradients). Writes the two curves to --png
and the final losses (mean of the last 20 steps) and their relative gap to
--json.
"""

import argparse
import json
import math
import time

import torch

import fp8kit
import fp8kit.nn as fnn


class Bf16Linear(torch.nn.Module):
    def __init__(self, n_in, n_out, device):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(n_out, n_in, device=device))
        self.bias = torch.nn.Parameter(torch.empty(n_out, device=device))
        # As torch.nn.Linear.
        torch.nn.init.kaiming_uniform_(self.weight, a=5 ** 0.5)
        torch.nn.init.uniform_(self.bias, -n_in ** -0.5, n_in ** -0.5)

    def forward(self, x):
        return torch.nn.functional.linear(x, self.weight.to(torch.bfloat16),
                                          self.bias.to(torch.bfloat16))


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, device):
        super().__init__()
        self.gain = torch.nn.Parameter(torch.ones(dim, device=device))

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
        return (y * self.gain).to(x.dtype)


class Model(torch.nn.Module):
    def __init__(self, args, linear):
        super().__init__()
        dim, blocks = args.dim, args.blocks
        self.task = args.task
        if self.task == "lm":
            # The two context tokens' embeddings, summed (master weights FP32).
            self.embed = torch.nn.Parameter(
                torch.randn(2, args.vocab, dim, device=args.device))
        self.inp = linear(dim, dim)
        self.norms = torch.nn.ModuleList(RMSNorm(dim, args.device)
                                         for _ in range(blocks))
        self.ups = torch.nn.ModuleList(linear(dim, 4 * dim) for _ in range(blocks))
        self.downs = torch.nn.ModuleList(linear(4 * dim, dim) for _ in range(blocks))
        self.head = linear(dim, args.vocab if self.task == "lm" else dim)

    def forward(self, x):
        if self.task == "lm":
            x = self.embed[0][x[:, 0]] + self.embed[1][x[:, 1]]
        h = self.inp(x.to(torch.bfloat16))
        for norm, up, down in zip(self.norms, self.ups, self.downs):
            h = h + down(torch.nn.functional.gelu(up(norm(h))))
        return self.head(h)


def batch(args, teacher, data):
    """One step's inputs and targets, drawn from `data` (a generator)."""
    if args.task == "lm":
        x = torch.randint(args.vocab, (args.tokens, 2), device=args.device,
                          generator=data)
        with torch.no_grad():
            probs = torch.softmax(teacher(x).float() / args.temperature, -1)
        return x, torch.multinomial(probs, 1, generator=data).squeeze(1)
    x = torch.randn(args.tokens, args.dim, device=args.device, generator=data)
    with torch.no_grad():
        return x, teacher(x).float()


def loss_of(args, out, target):
    if args.task == "lm":
        return torch.nn.functional.cross_entropy(out.float(), target)
    return torch.nn.functional.mse_loss(out.float(), target)


def make_linear(kind, device, recipe):
    def build(n_in, n_out):
        if kind == "fp8":
            return fnn.Linear(n_in, n_out, recipe=recipe, device=device,
                              dtype=torch.float32)
        return Bf16Linear(n_in, n_out, device)
    return build


def train(kind, args, init_state, teacher, recipe):
    torch.manual_seed(args.seed)
    model = Model(args, make_linear(kind, args.device, recipe))
    missing, unexpected = model.load_state_dict(init_state, strict=False)
    # Only the FP8 layers' delayed-scaling state is not in the BF16 model.
    assert not unexpected and all("amax_history" in k for k in missing), missing
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    data = torch.Generator(device=args.device).manual_seed(args.seed + 1)
    losses = []
    for step in range(args.steps):
        x, target = batch(args, teacher, data)
        loss = loss_of(args, model(x), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if step % 50 == 0 or step == args.steps - 1:
            print(f"{kind} step {step:4d} loss {losses[-1]:.5f}", flush=True)
    return losses


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--task", choices=("lm", "regress"), default="lm")
    p.add_argument("--vocab", type=int, default=1024,
                   help="lm: the number of tokens")
    p.add_argument("--temperature", type=float, default=0.15,
                   help="lm: of the teacher's softmax (lower: a lower floor)")
    p.add_argument("--dim", type=int, default=512)
    p.add_argument("--blocks", type=int, default=2)
    p.add_argument("--tokens", type=int, default=1024)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--recipe", default="deepseek",
                   help="fp8kit.Recipe.preset name for the FP8 run's forward GEMMs")
    p.add_argument("--png", default="train_mlp.png")
    p.add_argument("--json", default="train_mlp.json")
    p.add_argument("--plot", metavar="JSON",
                   help="only draw --png from the results of an earlier run")
    args = p.parse_args()
    if args.plot:
        with open(args.plot) as f:
            plot(json.load(f), args.png)
        return

    recipe = fp8kit.Recipe.preset(args.recipe)
    torch.manual_seed(args.seed)
    ref = Model(args, make_linear("bf16", args.device, recipe))
    init_state = {k: v.detach().clone() for k, v in ref.state_dict().items()}
    teacher = Model(args, make_linear("bf16", args.device, recipe))
    for param in teacher.parameters():
        param.requires_grad_(False)

    floor = None
    if args.task == "lm":
        # The teacher's entropy: the lowest cross-entropy any model reaches.
        x = torch.randint(args.vocab, (8192, 2), device=args.device,
                          generator=torch.Generator(device=args.device).manual_seed(7))
        with torch.no_grad():
            logp = torch.log_softmax(teacher(x).float() / args.temperature, -1)
        floor = float(-(logp.exp() * logp).sum(-1).mean())
        print(f"teacher entropy (the loss floor): {floor:.4f}; "
              f"uniform: {math.log(args.vocab):.4f}")

    start = time.time()
    curves = {kind: train(kind, args, init_state, teacher, recipe)
              for kind in ("bf16", "fp8")}
    tail = {k: sum(v[-20:]) / len(v[-20:]) for k, v in curves.items()}
    gap = (tail["fp8"] - tail["bf16"]) / tail["bf16"]
    device = (torch.cuda.get_device_name() if args.device.startswith("cuda")
              else "CPU (fp8kit's CPU oracle)")
    result = {"device": device, "recipe": str(recipe), "task": args.task,
              "vocab": args.vocab if args.task == "lm" else None,
              "steps": args.steps,
              "dim": args.dim, "blocks": args.blocks, "tokens": args.tokens,
              "final_loss_bf16": tail["bf16"], "final_loss_fp8": tail["fp8"],
              "relative_gap": gap, "loss_floor": floor, "seconds": time.time() - start,
              "losses": curves}
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    print(f"final loss (mean of the last 20 steps): bf16 {tail['bf16']:.5f}, "
          f"fp8 {tail['fp8']:.5f}, gap {100 * gap:+.2f}% on {device}")

    plot(result, args.png)


def plot(result, png):
    """The two loss curves of `result` (train_mlp.json) into `png`."""
    try:
        import matplotlib
    except ImportError:
        print(f"matplotlib is not installed: no {png}; draw it elsewhere with "
              f"train_mlp.py --plot <the json> --png {png}")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    curves, gap = result["losses"], result["relative_gap"]
    fig, ax = plt.subplots(figsize=(7, 4))
    for kind, label in (("bf16", "BF16"), ("fp8", "FP8 (fp8kit.nn.Linear)")):
        ax.plot(curves[kind], label=label, linewidth=1)
    if result.get("loss_floor") is not None:
        ax.axhline(result["loss_floor"], color="gray", linestyle="--",
                   linewidth=0.8, label="teacher entropy (floor)")
    ax.set_yscale("log")
    ax.set_xlabel("step")
    task = result.get("task", "regress")
    ax.set_ylabel("cross-entropy" if task == "lm" else "MSE loss")
    what = (f"next token of {result['vocab']}" if task == "lm"
            else "teacher regression")
    ax.set_title(f"{what}: {result['blocks']}-block MLP, dim {result['dim']}, "
                 f"{result['tokens']} tokens/step on {result['device']}\n"
                 f"final gap {100 * gap:+.2f}% (FP8 vs BF16, mean of the last "
                 f"20 steps)", fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main()
