#!/usr/bin/env bash
# Fails when a C++ source of ours is not clang-format clean (LLVM style, .clang-format).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cf="${CLANG_FORMAT:-}"
if [ -z "$cf" ]; then
  for c in /usr/lib/llvm-22/bin/clang-format clang-format-22 clang-format; do
    if command -v "$c" >/dev/null 2>&1; then cf="$c"; break; fi
  done
fi
[ -n "$cf" ] || { echo "check-format.sh: no clang-format found (install clang-format-22)" >&2; exit 1; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.h' '*.cpp' '*.cuh' '*.cu' | grep -v '^test/.*/Inputs/')
else
  mapfile -t files < <(find codegen runtime dialect passes tools test -name '*.h' -o -name '*.cpp' -o -name '*.cuh' -o -name '*.cu')
fi
"$cf" --dry-run --Werror "${files[@]}"
echo "clang-format: ${#files[@]} files clean ($("$cf" --version | head -1))"
