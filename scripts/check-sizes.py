#!/usr/bin/env python3
"""Fails when a hand-written source of ours outgrows the house limits.

  scripts/check-sizes.py [--max-file-lines N] [--max-function-lines N]

A C++ file (.h, .cpp, .cuh) over 600 lines, or a function body over 150
lines, is reported with its place and size; device kernels are exempt
(a GEMM's main loop reads best as one body): the files listed in
KERNEL_BODIES may hold long functions, and the device headers of
codegen/kernels/ long files. Generated files (build trees, test inputs) are
not ours to size.

Functions are found by braces: a '{' whose preceding text closes a
parameter list (and is not an if/for/while/switch/catch) opens a function
when no enclosing brace is a function; its length is the lines from that
'{' to its '}'. Comments, strings and character literals are blanked first.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Device kernels whose bodies are one function by design.
KERNEL_BODIES = {
    "codegen/kernels/sm90_gemm.cuh",
    "codegen/kernels/sm90_epilogue.cuh",
    "codegen/kernels/sm100_gemm.cuh",
}
# Device headers: a kernel and its helpers stay in one translation unit.
KERNEL_DIRS = ("codegen/kernels/",)

CONTROL = re.compile(r"\b(if|for|while|switch|catch)\s*\($")


def sources():
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard",
             "*.h", "*.cpp", "*.cuh"],
            cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        # Not a checkout (a copied tree): the source folders, no build tree.
        out = []
        for top in ("core", "numerics", "codegen", "runtime", "dialect",
                    "passes", "tools", "test"):
            for d, _, names in os.walk(os.path.join(ROOT, top)):
                out += [os.path.relpath(os.path.join(d, n), ROOT)
                        for n in names if n.endswith((".h", ".cpp", ".cuh"))]
    # A copied tree may carry a stale index: size the files that are here.
    return sorted(f for f in out if "/Inputs/" not in f and
                  os.path.isfile(os.path.join(ROOT, f)))


def blank(text):
    """Comments, raw strings, strings and chars replaced, newlines kept."""
    def keep_lines(m):
        return "\n" * m.group(0).count("\n")
    text = re.sub(r'R"(\w*)\((.*?)\)\1"', lambda m: '""' + keep_lines(m),
                  text, flags=re.S)
    text = re.sub(r"/\*.*?\*/", keep_lines, text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(\\.|[^'\\\n])*'", "''", text)
    return text


def opens_function(before):
    """True when the text before a '{' ends a function's signature."""
    tail = before.rstrip()
    # Trailing qualifiers and a trailing return type.
    tail = re.sub(r"(\s*(const|override|noexcept|mutable|final|"
                  r"->\s*[\w:<>,\s\*&]+))*$", "", tail)
    # A constructor's initializer list: name(args), name{args}, ...
    if not tail.endswith(")"):
        return False
    depth = 0
    for i in range(len(tail) - 1, -1, -1):
        c = tail[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                head = tail[:i].rstrip()
                return not CONTROL.search(head + "(") and bool(
                    re.search(r"[\w\]>~=+\-*/<!&|^%]$", head))
    return False


def functions(text):
    """(first line, line count) of every outermost function body."""
    stack = []  # (is_function, line)
    line = 1
    found = []
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            is_fn = opens_function(text[max(0, i - 400):i]) and not any(
                f for f, _ in stack)
            stack.append((is_fn, line))
        elif c == "}" and stack:
            is_fn, start = stack.pop()
            if is_fn:
                found.append((start, line - start + 1))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-file-lines", type=int, default=600)
    ap.add_argument("--max-function-lines", type=int, default=150)
    args = ap.parse_args()
    problems = []
    files = sources()
    for path in files:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        lines = text.count("\n")
        if lines > args.max_file_lines and not path.startswith(KERNEL_DIRS):
            problems.append(f"{path}: {lines} lines (expected at most "
                            f"{args.max_file_lines})")
        if path in KERNEL_BODIES:
            continue
        for start, count in functions(blank(text)):
            if count > args.max_function_lines:
                problems.append(f"{path}:{start}: a function of {count} lines "
                                f"(expected at most "
                                f"{args.max_function_lines})")
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    print(f"check-sizes: {len(files)} files within {args.max_file_lines} "
          f"lines, functions within {args.max_function_lines}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
