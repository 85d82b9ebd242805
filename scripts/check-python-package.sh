#!/usr/bin/env bash
# fp8kit as a user installs it: pip builds a wheel from a clean copy of the
# tracked sources (no build tree: pyproject.toml, scikit-build-core, our
# CMake with FP8_ENABLE_MLIR=AUTO), installs it into a fresh directory, and
# the CPU tests run against the installed package.
#   scripts/check-python-package.sh PYTHON
# PYTHON: an interpreter with nanobind, scikit-build-core, numpy, pytest and
# PyTorch (scripts/setup-python.sh). ctest runs this as python-package.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="${1:?usage: check-python-package.sh PYTHON}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
# (one tar reading the list: xargs would split a long list over several
# tars, whose concatenated archives the reader stops at the first of)
git -C "$root" ls-files -z | tar cf - -C "$root" --null -T - | tar xf - -C "$work/src"

start=$(date +%s)
"$py" -m pip wheel -q --no-build-isolation --no-deps -w "$work/wheel" "$work/src"
wheel=("$work"/wheel/fp8kit-*.whl)
"$py" -m pip install -q --no-deps --target "$work/site" "${wheel[0]}"
echo "check-python-package.sh: built and installed $(basename "${wheel[0]}") in $(( $(date +%s) - start )) s"

cd "$work"
PYTHONPATH="$work/site" "$py" -c "
import fp8kit, sys
assert fp8kit.__file__.startswith('$work/site'), fp8kit.__file__
print('check-python-package.sh: fp8kit', fp8kit.__version__, 'compiler:', fp8kit.has_compiler)"
PYTHONPATH="$work/site" "$py" -m pytest -q -p no:cacheprovider -m "not gpu" "$root/python/tests"
