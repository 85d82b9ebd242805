"""Importing fp8kit needs neither PyTorch nor a GPU; the first GPU call on a
machine without one gets a clear RuntimeError."""

import subprocess
import sys

import fp8kit
import pytest

from fake_dlpack import FakeDeviceArray


def run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, check=False)


def test_import_needs_no_torch():
    # torch blocked: importing fp8kit (and its recipes and CPU tensor API)
    # must not touch it.
    r = run("import sys; sys.modules['torch'] = None\n"
            "import fp8kit, numpy as np\n"
            "q = fp8kit.quantize(np.ones((2, 128), np.float32))\n"
            "print(q.codes.dtype, fp8kit.Recipe.preset('deepseek'))")
    assert r.returncode == 0, r.stderr
    assert "uint8 #fp8.recipe<" in r.stdout


def test_version_and_compiler_flag():
    assert fp8kit.__version__.count(".") == 2
    assert isinstance(fp8kit.has_compiler, bool)


def test_device_reports_the_gpu_or_why_there_is_none():
    try:
        info = fp8kit.device()
    except RuntimeError as e:
        msg = str(e)
        assert msg.startswith("fp8kit.device: no GPU: "), msg
        assert "Traceback" not in msg
        return
    assert info["sm_count"] > 0 and len(info["compute_capability"]) == 2


@pytest.mark.nogpu
def test_gpu_call_without_a_gpu_says_so():
    # A CUDA array (its DLPack capsule says so; its memory is never touched)
    # on a machine whose driver cannot be loaded: a RuntimeError naming the
    # missing GPU and the CPU alternative, not a crash.
    with pytest.raises(RuntimeError):
        fp8kit.device()  # CI's machine has no GPU driver
    x = FakeDeviceArray((4, 128), "float32", device_type=2)
    codes = FakeDeviceArray((4, 128), "uint8", device_type=2)
    scales = FakeDeviceArray((4, 1), "float32", device_type=2)
    with pytest.raises(RuntimeError) as e:
        fp8kit._core.quantize(x, codes, scales, fp8kit.QuantRecipe())
    assert "fp8kit.quantize: no GPU to run on" in str(e.value)
    assert "host memory run on the CPU oracle" in str(e.value)


def test_arrays_on_other_devices_are_refused():
    x = FakeDeviceArray((4, 128), "float32", device_type=7)  # Vulkan
    with pytest.raises(ValueError) as e:
        fp8kit._core.quantize(x, x, x, fp8kit.QuantRecipe())
    assert str(e.value) == (
        "fp8kit.quantize: x: expected an array in host memory or on a CUDA "
        "device, found one on DLPack device type 7")


def test_the_readme_snippet_is_ten_lines_of_python(root):
    # test_gpu.py runs it on the GPU; here: it is there, short and valid.
    text = (root / "README.md").read_text()
    block = text[text.index("<!-- python-snippet:"):].split("```python\n", 1)[1]
    block = block.split("```", 1)[0]
    assert 0 < len(block.strip().splitlines()) <= 10
    compile(block, "README.md", "exec")
