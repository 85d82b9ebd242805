#!/usr/bin/env bash
# Installs what the build needs and is missing (idempotent: only what is
# missing, nothing when all is there). Debian/Ubuntu packages via apt-get.
#
#   scripts/setup.sh            everything (MLIR half included)
#   scripts/setup.sh --no-mlir  only what codegen/ + runtime/ need
set -euo pipefail

want_mlir=1
for arg in "$@"; do
  case "$arg" in
    --no-mlir) want_mlir=0 ;;
    *) echo "setup.sh: unknown argument '$arg' (expected --no-mlir)" >&2; exit 2 ;;
  esac
done

pkgs=(cmake ninja-build g++ libgtest-dev nlohmann-json3-dev)
if [ "$want_mlir" = 1 ]; then
  pkgs+=(libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools clang-format-22 lld-22)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup.sh: missing packages (${missing[*]}) and no apt-get to install them" >&2
    exit 1
  fi
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  echo "setup.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cuda="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -f "$cuda/include/cuda.h" ]; then
  echo "setup.sh: CUDA toolkit not found at '$cuda' (no include/cuda.h)." >&2
  echo "          Install CUDA 13 at /usr/local/cuda or set CUDA_HOME." >&2
  exit 1
fi
