#!/usr/bin/env bash
# The Python environment of the tests and of pip install: a virtual
# environment (default build/pyenv; PY_ENV overrides) holding what building
# fp8kit needs (nanobind, scikit-build-core) and what its tests use (numpy,
# pytest, PyTorch: the CPU tests of the PyTorch integration). Idempotent.
# Prints the environment's interpreter on its last line.
#   scripts/setup-python.sh [--no-torch]
# Without a package index (the GPU machine): FP8_PY_WHEELS=DIR installs from
# the wheels in DIR only (pip download them elsewhere), PyTorch excepted when
# the base interpreter already has it (the venv then sees it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
env_dir="${PY_ENV:-$root/build/pyenv}"
torch=1
for arg in "$@"; do
  case "$arg" in
    --no-torch) torch=0 ;;
    *) echo "setup-python.sh: unknown argument '$arg' (expected --no-torch)" >&2; exit 2 ;;
  esac
done

base="${PYTHON:-python3}"
if ! command -v "$base" >/dev/null 2>&1; then
  echo "setup-python.sh: no '$base' (Python >= 3.9) on PATH; set PYTHON" >&2
  exit 1
fi
# A venv and the headers an extension is built against (Debian splits both
# out of python3).
if ! "$base" -c 'import venv, ensurepip, sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "setup-python.sh: installing python3-venv python3-dev" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv python3-dev >&2
  else
    echo "setup-python.sh: '$base' lacks venv/ensurepip or its headers (Python.h): install python3-venv and python3-dev" >&2
    exit 1
  fi
fi

pkgs=(nanobind scikit-build-core numpy pytest)
[ "$torch" = 1 ] && pkgs+=(torch)
have_all() {
  for p in "${pkgs[@]}"; do "$1" -c "import ${p//-/_}" 2>/dev/null || return 1; done
}
# Offline with everything in the base interpreter (the GPU machine's Python,
# itself a venv): use it as it is.
if [ -n "${FP8_PY_WHEELS:-}" ] && have_all "$base"; then
  command -v "$base"
  exit 0
fi
if [ ! -x "$env_dir/bin/python" ]; then
  "$base" -m venv "$env_dir" >&2
  # Offline: the base interpreter's packages (PyTorch) stay visible. A .pth
  # file rather than --system-site-packages, which sees only the system
  # Python's when the base is itself a venv.
  if [ -n "${FP8_PY_WHEELS:-}" ]; then
    "$base" -c 'import site, sys; print("\n".join(p for p in site.getsitepackages() if p))' \
      >"$("$env_dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/fp8-base-site.pth"
  fi
fi
py="$env_dir/bin/python"

missing=()
for p in "${pkgs[@]}"; do
  mod="${p//-/_}"
  "$py" -c "import $mod" 2>/dev/null || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup-python.sh: installing ${missing[*]} into $env_dir" >&2
  if [ -n "${FP8_PY_WHEELS:-}" ]; then
    "$py" -m pip install -q --no-index --find-links "$FP8_PY_WHEELS" "${missing[@]}" >&2
  else
    "$py" -m pip install -q "${missing[@]}" >&2
  fi
fi
echo "$py"
