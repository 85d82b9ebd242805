"""fp8kit on the H100 (scripts/gpu-check.sh runs these with -m gpu): every
API against the CPU oracle and against torch._scaled_mm on ragged shapes,
torch.compile of a module using the custom ops, the FP8 Linear's gradients
against its own steps and against BF16, the training example's loss gap,
and the Python call overhead over the C++ call."""

import json
import os
import pathlib
import subprocess
import sys
import time

import pytest
import torch

import fp8kit
import fp8kit.nn as fnn
from fp8kit import Granularity, QuantRecipe, Recipe, Scaling

pytestmark = pytest.mark.gpu
DEV = "cuda"


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def bits(t):
    return t.view(torch.uint8) if t.dtype.itemsize == 1 else t


def test_device_is_an_sm90a_gpu():
    info = fp8kit.device()
    assert info["compute_capability"] == (9, 0), info


GRANULARITIES = ["1x128", "128x128", "per_row", "per_column", "per_tensor",
                 "32x64", "mx"]


@pytest.mark.parametrize("shape", [(1, 128), (7, 300), (129, 4096), (3, 5, 64)])
@pytest.mark.parametrize("granularity", GRANULARITIES)
@pytest.mark.parametrize("fmt", ["e4m3fn", "e5m2"])
def test_quantize_is_the_oracle_bit_for_bit(shape, granularity, fmt):
    torch.manual_seed(len(shape) + shape[-1])
    x = torch.randn(shape, dtype=torch.bfloat16, device=DEV) * 3
    g = fp8kit.quantize(x, fmt, granularity)
    c = fp8kit.quantize(x.cpu(), fmt, granularity)
    assert torch.equal(bits(g.codes).cpu(), bits(c.codes))
    assert torch.equal(bits(g.scales).cpu(), bits(c.scales))


def test_delayed_scaling_on_the_gpu_is_the_oracle():
    r = QuantRecipe("e4m3fn", "per_tensor", Scaling("delayed", history=4, margin=1))
    hg, hc = fp8kit.amax_history(r, torch.empty(0, device=DEV)), fp8kit.amax_history(r, torch.empty(0))
    for step in range(6):
        x = torch.randn(64, 256, device=DEV) * (step + 1)
        g = fp8kit.quantize(x, r, history=hg)
        c = fp8kit.quantize(x.cpu(), r, history=hc)
        assert torch.equal(bits(g.codes).cpu(), bits(c.codes)), step
        assert torch.equal(g.scales.cpu(), c.scales), step
    assert torch.equal(hg.cpu(), hc)
    q = fp8kit.quantize(x, r, history=hg, stats=True)
    assert q.stats["used_history"] and q.stats["elements"] == 64 * 256


@pytest.mark.parametrize("granularity", ["1x128", "128x128", "per_tensor", "32x64"])
def test_transpose_is_the_oracle(granularity):
    x = torch.randn(129, 520, device=DEV)
    q = fp8kit.quantize(x, "e4m3fn", granularity)
    g = fp8kit.transpose(q.codes, q.scales, "e4m3fn", granularity)
    c = fp8kit.transpose(q.codes.cpu(), q.scales.cpu(), "e4m3fn", granularity)
    assert torch.equal(bits(g.codes).cpu(), bits(c.codes))
    assert torch.equal(g.scales.cpu(), c.scales)


SHAPES = [(1, 64, 128), (7, 200, 256), (129, 4096, 7168), (512, 2112, 1024)]
RECIPES = {
    "deepseek": Recipe("1x128", "128x128", 128, "f32"),
    "rows": Recipe("per_row", "per_row", None, "f32"),
    "tensor": Recipe("per_tensor", "per_tensor", None, "f32"),
}


@pytest.mark.parametrize("m, n, k", SHAPES)
@pytest.mark.parametrize("name", list(RECIPES))
def test_gemm_against_the_oracle(m, n, k, name):
    r = RECIPES[name]
    torch.manual_seed(m + n + k)
    a, b = torch.randn(m, k, device=DEV), torch.randn(n, k, device=DEV)
    qa, qb = fp8kit.quantize(a, r.a), fp8kit.quantize(b, r.b)
    d = fp8kit.gemm(qa.codes, qa.scales, qb.codes, qb.scales, r)
    want = fp8kit.gemm(qa.codes.cpu(), qa.scales.cpu(), qb.codes.cpu(),
                       qb.scales.cpu(), r)
    # The tensor cores' partial sums differ from FP32 in their last bits
    # (numerics/Accumulator.h): within 2^-10 of sum |a||b|.
    err = (d.cpu() - want).abs()
    scale = (a.abs().cpu() @ b.abs().cpu().T)
    assert bool((err <= scale * 2.0 ** -10 + 1e-6).all()), name


def test_gemm_against_torch_scaled_mm_rowwise_and_per_tensor():
    torch.manual_seed(11)
    # torch._scaled_mm wants N and K multiples of 16.
    for m, n, k in [(7, 208, 256), (129, 4096, 7168), (64, 64, 128)]:
        a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
        b = torch.randn(n, k, device=DEV, dtype=torch.bfloat16)
        r = Recipe("per_row", "per_row", None)
        qa, qb = fp8kit.quantize(a, r.a), fp8kit.quantize(b, r.b)
        ours = fp8kit.gemm(qa.codes, qa.scales, qb.codes, qb.scales, r)
        # Scales: ours [M, 1] and [N, 1]; torch._scaled_mm takes [M, 1] and
        # [1, N] (B column-major: our row-major [N, K] transposed).
        theirs = torch._scaled_mm(qa.codes, qb.codes.t(), scale_a=qa.scales,
                                  scale_b=qb.scales.t(), out_dtype=torch.bfloat16)
        assert rel(ours, theirs) < 2.0 ** -7, (m, n, k)
        t = Recipe("per_tensor", "per_tensor", None)
        qa, qb = fp8kit.quantize(a, t.a), fp8kit.quantize(b, t.b)
        ours = fp8kit.gemm(qa.codes, qa.scales, qb.codes, qb.scales, t)
        theirs = torch._scaled_mm(qa.codes, qb.codes.t(),
                                  scale_a=qa.scales.reshape(()),
                                  scale_b=qb.scales.reshape(()),
                                  out_dtype=torch.bfloat16)
        assert rel(ours, theirs) < 2.0 ** -7, (m, n, k)


def test_the_readme_snippet(root):
    # The README's 10-line snippet, as it is: quantize two tensors, multiply
    # them, and match torch._scaled_mm within the similarity bound.
    text = (root / "README.md").read_text()
    marker = "<!-- python-snippet:"
    block = text[text.index(marker):].split("```python\n", 1)[1].split("```", 1)[0]
    assert len(block.strip().splitlines()) <= 10, block
    exec(compile(block, "README.md", "exec"), {})


@pytest.mark.parametrize("m", [1, 129])
def test_plan_on_the_gpu_against_the_oracle(root, m):
    # The same plan and inputs (seeded) on the GPU and on the CPU oracle:
    # within the similarity bound (accumulation order; a rare FP8 code of
    # the SwiGLU quantize one step apart).
    plan = fp8kit.Plan.load(str(root / "examples/plans/mlp.sm_90a.plan.json"))
    gpu, cpu = plan.run_gpu({"M": m}, seed=4), plan.run_cpu({"M": m}, seed=4)
    for name in plan.outputs:
        x, y = gpu[name].astype("float64"), cpu[name].astype("float64")
        assert x.shape == y.shape
        diff = 1 - 2 * (x * y).sum() / (x * x + y * y).sum()
        assert diff < 1e-3, (name, diff)


def test_column_major_scales_as_torch_keeps_them():
    r = Recipe.preset("deepseek")
    a = torch.randn(129, 1024, device=DEV)
    b = torch.randn(256, 1024, device=DEV)
    qa, qb = fp8kit.quantize(a, r.a), fp8kit.quantize(b, r.b)
    d = fp8kit.gemm(qa.codes, qa.scales, qb.codes, qb.scales, r)
    col = qa.scales.t().contiguous().t()  # the layout torch._scaled_mm wants
    assert torch.equal(fp8kit.gemm(qa.codes, col, qb.codes, qb.scales, r), d)


def test_mixed_devices_are_refused():
    r = Recipe.preset("deepseek")
    qa = fp8kit.quantize(torch.randn(8, 128, device=DEV), r.a)
    qb = fp8kit.quantize(torch.randn(64, 128), r.b)
    with pytest.raises(ValueError) as e:
        fp8kit.gemm(qa.codes, qa.scales, qb.codes, qb.scales, r)
    assert str(e.value) == "fp8kit.gemm: b: expected it on cuda:0, as a, found cpu"


def test_runs_on_the_current_stream():
    r = Recipe.preset("deepseek")
    s = torch.cuda.Stream()
    a = torch.randn(1024, 4096, device=DEV)
    b = torch.randn(4096, 4096, device=DEV)
    with torch.cuda.stream(s):
        qa, qb = fp8kit.quantize(a, r.a), fp8kit.quantize(b, r.b)
        d = fp8kit.gemm(qa.codes, qa.scales, qb.codes, qb.scales, r)
        e = d.float().sum()  # ordered after the GEMM on s
    s.synchronize()
    assert torch.isfinite(e)
    want = fp8kit.gemm(qa.codes, qa.scales, qb.codes, qb.scales, r)
    assert torch.equal(d, want)


def test_linear_on_the_gpu_and_its_cpu_twin():
    torch.manual_seed(3)
    layer = fnn.Linear(1024, 512, device=DEV)
    cpu = fnn.Linear(1024, 512)
    cpu.load_state_dict({k: v.cpu() for k, v in layer.state_dict().items()})
    x = torch.randn(129, 1024, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    xc = x.detach().cpu().requires_grad_()
    y, yc = layer(x), cpu(xc)
    dy = torch.randn_like(y)
    y.backward(dy)
    yc.backward(dy.cpu())
    assert rel(y.cpu(), yc) < 2.0 ** -7
    assert rel(x.grad.cpu(), xc.grad) < 2.0 ** -7
    assert rel(layer.weight.grad.cpu(), cpu.weight.grad) < 2.0 ** -7
    ref = torch.nn.Linear(1024, 512, device=DEV, dtype=torch.bfloat16)
    ref.load_state_dict({"weight": layer.weight.detach(), "bias": layer.bias.detach()})
    x2 = x.detach().clone().requires_grad_()
    ref(x2).backward(dy)
    assert rel(x.grad, x2.grad) < 0.12  # E5M2 gradients
    assert rel(layer.weight.grad, ref.weight.grad) < 0.12


def test_torch_compile_on_the_gpu():
    torch.manual_seed(5)
    model = torch.nn.Sequential(fnn.Linear(512, 1024, device=DEV),
                                torch.nn.GELU(),
                                fnn.Linear(1024, 512, device=DEV))
    compiled = torch.compile(model)
    for tokens in (129, 256):
        x = torch.randn(tokens, 512, device=DEV, dtype=torch.bfloat16)
        assert torch.equal(compiled(x), model(x))


def test_training_example_within_one_percent(root, tmp_path):
    # FP8_TRAIN_OUT: where scripts/gpu-check.sh keeps the curves and the PNG.
    where = pathlib.Path(os.environ.get("FP8_TRAIN_OUT", str(tmp_path)))
    out = where / "train_mlp.json"
    with open(where / "train_mlp.log", "w") as log:
        subprocess.run([sys.executable, str(root / "examples/python/train_mlp.py"),
                        "--device", DEV, "--json", str(out),
                        "--png", str(where / "train_mlp.png")],
                       check=True, stdout=log, stderr=subprocess.STDOUT)
    result = json.loads(out.read_text())
    assert abs(result["relative_gap"]) <= 0.01, result


def test_python_call_overhead_over_cpp_is_at_most_5us():
    # The same work on both sides: fp8kit.gemm into a given output against
    # fp8::gemm from C++ on the same tensors (the launch is asynchronous:
    # host time per call, best of five loops). Allocating the output
    # (torch.empty, PyTorch's cost) is reported beside it.
    r = Recipe.preset("deepseek")
    a = torch.randn(128, 128, device=DEV)
    b = torch.randn(128, 128, device=DEV)
    qa, qb = fp8kit.quantize(a, r.a), fp8kit.quantize(b, r.b)
    d = torch.empty(128, 128, device=DEV, dtype=torch.bfloat16)
    stream = torch.cuda.current_stream().cuda_stream
    iters = 2000
    fp8kit.gemm(qa.codes, qa.scales, qb.codes, qb.scales, r)
    torch.cuda.synchronize()

    def per_call(fn):
        best = float("inf")
        for _ in range(5):
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(iters):
                fn()
            best = min(best, (time.perf_counter() - start) / iters)
        torch.cuda.synchronize()
        return best

    into = per_call(lambda: fp8kit.gemm(qa.codes, qa.scales, qb.codes,
                                        qb.scales, r, out=d))
    alloc = per_call(lambda: fp8kit.gemm(qa.codes, qa.scales, qb.codes,
                                         qb.scales, r))
    empty = per_call(lambda: torch.empty(128, 128, device=DEV,
                                         dtype=torch.bfloat16))
    cpp = min(fp8kit._core.gemm_launch_seconds(
        qa.codes, qa.scales, qb.codes, qb.scales, d, r, stream, iters)
        for _ in range(5))
    torch.cuda.synchronize()
    assert torch.equal(d, fp8kit.gemm(qa.codes, qa.scales, qb.codes, qb.scales, r))
    print(f"per call: fp8::gemm from C++ {cpp * 1e6:.2f} us; fp8kit.gemm "
          f"into out= {into * 1e6:.2f} us (overhead {(into - cpp) * 1e6:.2f} "
          f"us); allocating its output {alloc * 1e6:.2f} us (torch.empty "
          f"alone {empty * 1e6:.2f} us)")
    assert into - cpp <= 5e-6
