"""fp8kit.Plan: the committed example plans loaded, inspected, their kernels
JIT-compiled without a GPU, run on the CPU oracle; hostile plans and
arguments refused with the reason."""

import json

import numpy as np
import pytest

import fp8kit


@pytest.fixture
def mlp(root):
    return fp8kit.Plan.load(str(root / "examples/plans/mlp.sm_90a.plan.json"))


def test_load_and_inspect(mlp, root):
    assert mlp.function == "mlp" and mlp.arch == "sm_90a"
    assert mlp.dims == ["M"]
    roles = {b["role"] for b in mlp.buffers.values()}
    assert {"input", "weight", "output"} <= roles
    assert all(isinstance(d, (int, str)) for b in mlp.buffers.values()
               for d in b["shape"])
    kinds = {s["kind"] for s in mlp.steps}
    assert {"quantize", "gemm"} <= kinds
    text = (root / "examples/plans/mlp.sm_90a.plan.json").read_text()
    assert json.loads(mlp.to_json()) == json.loads(text)
    assert repr(mlp).startswith("<fp8kit.Plan @mlp for sm_90a: ")


def test_shapes(mlp):
    shapes = mlp.shapes({"M": 7})
    outputs = mlp.outputs
    assert all(shapes[o][0] == 7 for o in outputs)
    with pytest.raises(ValueError) as e:
        mlp.shapes({})
    assert str(e.value).startswith("fp8kit.Plan.shapes: ")
    assert "M" in str(e.value)
    with pytest.raises(ValueError) as e:
        mlp.shapes({"M": 7, "Q": 3})
    assert "Q" in str(e.value)
    with pytest.raises(ValueError):
        mlp.shapes({"M": -1})


def test_compile_without_a_gpu(mlp):
    kernels = mlp.compile({"M": 128})
    assert len(kernels) >= 3
    for k in kernels:
        assert k["origin"] in ("compiled", "disk cache", "memory")
        assert k["cubin_bytes"] > 0 and k["kernel"]
    with pytest.raises(ValueError, match="expected sm_count in"):
        mlp.compile({"M": 128}, sm_count=0)


def test_run_on_the_cpu_oracle(mlp):
    out = mlp.run_cpu({"M": 3}, seed=5)
    assert set(out) == set(mlp.outputs)
    y = out[mlp.outputs[0]]
    assert y.dtype == np.float32 and y.shape[0] == 3 and np.isfinite(y).all()
    again = mlp.run_cpu({"M": 3}, seed=5)
    assert all(np.array_equal(out[k], again[k]) for k in out)
    other = mlp.run_cpu({"M": 3}, seed=6)
    assert not np.array_equal(other[mlp.outputs[0]], y)


@pytest.mark.nogpu
def test_run_on_the_gpu_without_one_says_so(mlp):
    # Its arguments first (a ValueError naming them), then the driver.
    with pytest.raises(ValueError, match="'nope' is not an input or a weight"):
        mlp.run_gpu({"M": 2}, {"nope": np.zeros((2, 2), np.float32)})
    with pytest.raises(RuntimeError, match="no GPU to run the plan on.*run_cpu"):
        mlp.run_gpu({"M": 2})


def test_bind_checks_the_weights_names_first(mlp):
    # Names are checked before the driver is touched, so these hold
    # anywhere.
    w = np.zeros((2, 2), np.float32)
    with pytest.raises(ValueError,
                       match=r"fp8kit.Plan.bind: weights: 'arg0' is not a weight"):
        mlp.bind({"arg0": w, "arg1": w, "arg2": w, "arg3": w})
    with pytest.raises(ValueError,
                       match=r"fp8kit.Plan.bind: weights: missing 'arg3' \(bf16\)"):
        mlp.bind({"arg1": w, "arg2": w})
    with pytest.raises(ValueError, match="expected names"):
        mlp.bind({1: w})


@pytest.mark.nogpu
def test_bind_without_a_gpu_says_so(mlp):
    w = np.zeros((2, 2), np.float32)
    with pytest.raises(RuntimeError,
                       match="fp8kit.Plan.bind: no GPU to run the plan on.*run_cpu"):
        mlp.bind({"arg1": w, "arg2": w, "arg3": w})


def test_run_with_inputs(mlp):
    shapes = mlp.shapes({"M": 2})
    rng = np.random.default_rng(1)
    inputs = {name: rng.standard_normal(shapes[name]).astype(np.float32) *
              (0.05 if b["role"] == "weight" else 1.0)
              for name, b in mlp.buffers.items()
              if b["role"] in ("input", "weight")}
    out = mlp.run_cpu({"M": 2}, inputs)
    y = out[mlp.outputs[0]]
    scaled = dict(inputs)
    first = next(n for n, b in mlp.buffers.items() if b["role"] == "input")
    scaled[first] = inputs[first] * 2
    assert not np.array_equal(mlp.run_cpu({"M": 2}, scaled)[mlp.outputs[0]], y)
    missing = dict(inputs)
    missing.pop(first)
    with pytest.raises(ValueError) as e:
        mlp.run_cpu({"M": 2}, missing)
    assert f"missing input '{first}': expected an array" in str(e.value)
    with pytest.raises(ValueError) as e:
        mlp.run_cpu({"M": 2}, dict(inputs, nonsense=inputs[first]))
    assert "inputs: 'nonsense' is not an input or a weight of the plan" in str(e.value)
    wrong = dict(inputs)
    wrong[first] = inputs[first][:1]
    with pytest.raises(ValueError) as e:
        mlp.run_cpu({"M": 2}, wrong)
    assert "expected shape" in str(e.value) and "the array given" in str(e.value)
    wrong[first] = inputs[first].astype(np.float64)
    with pytest.raises(ValueError) as e:
        mlp.run_cpu({"M": 2}, wrong)
    assert f"inputs['{first}']: expected float32, float16, bfloat16 or int32, found float64" in str(e.value)


@pytest.mark.parametrize("text, message", [
    ("{", "mlp.json"),
    ("[]", "mlp.json"),
    ('{"format": 99}', "format"),
])
def test_hostile_plans_are_refused(text, message):
    with pytest.raises(ValueError) as e:
        fp8kit.Plan.from_json(text, "mlp.json")
    assert str(e.value).startswith("fp8kit.Plan: ")
    assert message in str(e.value)


def test_missing_and_non_regular_files(tmp_path):
    with pytest.raises(ValueError) as e:
        fp8kit.Plan.load(str(tmp_path / "none.json"))
    assert "none.json" in str(e.value)
    with pytest.raises(ValueError) as e:
        fp8kit.Plan.load(str(tmp_path))
    assert str(tmp_path) in str(e.value)
