# -*- Python -*-
# lit configuration for the fp8 toolkit: dialect, passes, emitted CUDA.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "FP8"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".json"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fp8_obj_root, "test")
# Inputs and helpers that are not tests themselves.
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%fp8_src_root", config.fp8_src_root))
config.substitutions.append(("%fp8_tools_dir", config.fp8_tools_dir))
config.environment["FP8_CACHE_DIR"] = os.path.join(config.test_exec_root, "jit-cache")

# The sanitizer options (scripts/test-sanitizers.sh) reach the tools a test
# runs: lit passes them by default, named here so that it stays so.
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP", "CUDA_HOME",
                                     "ASAN_OPTIONS", "UBSAN_OPTIONS",
                                     "ASAN_SYMBOLIZER_PATH", "UBSAN_SYMBOLIZER_PATH"])
llvm_config.use_default_substitutions()

# `not`, `count` and friends where a RUN line starts with them.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.fp8_tools_dir, config.llvm_tools_dir]
tools = ["fp8-opt"]
for optional in ["fp8-translate", "fp8-numerics", "fp8-run", "fp8-tune", "fp8-bench", "fp8-codegen"]:
    if os.path.exists(os.path.join(config.fp8_tools_dir, optional)):
        tools.append(optional)
        config.available_features.add(optional)
llvm_config.add_tool_substitutions(tools, tool_dirs)

# A GPU with its driver: tests that need its absence say UNSUPPORTED: gpu.
if os.path.exists("/dev/nvidiactl"):
    config.available_features.add("gpu")
