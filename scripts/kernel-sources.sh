#!/usr/bin/env bash
# Collects the generated CUDA source of every kernel that the NVRTC compile
# matrices, the committed plans and the benchmark shapes use, so that a change
# meant to keep behaviour (a refactor of codegen/ or runtime/) can be shown to
# leave every one of them byte-identical.
#
#   scripts/kernel-sources.sh [--build DIR] [-j N] OUTDIR   collect
#   scripts/kernel-sources.sh compare A B                    compare two
#
# Around a refactor:
#
#   git worktree add ../before <old-commit>
#   BUILD_DIR=$PWD/../before/build ../before/scripts/build.sh
#   scripts/kernel-sources.sh --build ../before/build /tmp/ks-before
#   scripts/build.sh                        # the new code, into build/
#   scripts/kernel-sources.sh --build build /tmp/ks-after
#   scripts/kernel-sources.sh compare /tmp/ks-before /tmp/ks-after
#
# Both collections take the plans and the shapes from the checkout this script
# is in, and the kernels from the build named: a difference comes from the
# build. (The compile matrices are the tests' own, so they are the build's
# commit's; a change to test/runtime/*CompileTest.cpp shows up as kernels
# missing or added.)
#
# OUTDIR (created; it must not exist or be empty) receives
#   sources/<source>/<kernel>.cu   one file per kernel, named by its kernel
#                                  name, per source below
#   MANIFEST                       sorted "sha256  <source>/<kernel>.cu" lines
#                                  (sha256sum's format: cd OUTDIR/sources &&
#                                  sha256sum -c ../MANIFEST)
#   SUMMARY                        the build, its commit, kernels per source,
#                                  time per source, warnings
#   logs/                          the tools' output
# Sources:
#   matrices      every kernel the NVRTC compile matrices build: the
#                 parametrised instances of Sm90Compile, Sm90Overlap,
#                 Sm100Compile, RecipeSampleCompile and ElementwiseCompile
#                 (ctest Matrix/..., TailSplit/..., Classes/..., AllKinds/...)
#                 in every test executable of the build, NVRTC compiling
#                 them as the tests do, in -j N shards (default: one per
#                 core; 5 to 6 minutes on the shared 2-core CPU machine)
#   headers       the kernel headers (codegen/kernels/*) those programs were
#                 given: what NVRTC compiles is a source plus these
#   plans-M<m>    every step of examples/plans/*.json and
#                 test/models/Inputs/*.json, fp8-run --compile-only with every
#                 dimension the plan declares set to m (512: the GPU machine's
#                 --verify runs; 4096: its --bench runs). The spec in a GEMM
#                 kernel's header comment names M, so each M is its own source
#   bench-deepseek, bench-per-tensor
#                 what fp8-bench compiles for each dense shape of
#                 bench/shapes.json with the default heuristic on an H100 (132
#                 SMs): the DeepSeek recipe (its default) and --recipe
#                 per-tensor, both promotion 128 and bf16 out. fp8-bench needs
#                 a GPU; fp8-codegen --m M --n N --k K makes the same spec
#                 (gemmKernelSpec and fp8-codegen both call selectConfig with
#                 M and the SM count) and, with fp8-bench's scale layouts
#                 (every K scale by TMA), the same kernel. fp8-bench's peers
#                 are cuBLASLt: no generated kernel
#   cubins-plans-M<m>, cubins-bench-deepseek, cubins-bench-per-tensor
#                 the cubins NVRTC made of the plans' and the benchmark
#                 shapes' kernels (fp8-run's kernel cache entries, one fresh
#                 cache per plan; fp8-codegen --emit cubin), named by kernel:
#                 NVRTC's output is byte-identical for identical input, so
#                 a refactor of the kernel headers (codegen/kernels/), which
#                 changes headers/ and no source, shows here whether the
#                 machine code moved
#
# How the sources are obtained: fp8-run writes them with FP8_DUMP_SOURCE (the
# kernel cache writes a source there before it compiles it, never on a cache
# hit: FP8_CACHE_DIR=off, so every kernel is compiled); fp8-codegen --emit
# cuda writes one, --emit info names it. The compile matrices call
# compileWithNvrtc directly, which writes no source; the tests run with a
# small preloaded library (built here with cc) that records each program
# handed to nvrtcCreateProgram under the name the runtime gives it
# (<kernel>.cu) and then calls NVRTC as usual. Nothing in the build changes.
#
# Every FP8_* variable is unset first (FP8_KERNEL_TRACE, FP8_SCALE_TMA, the
# register budgets ... change the kernels). When two programs of one source
# have one name but different text, both are kept as <kernel>~<sha12>.cu and
# a warning is printed.
#
# compare A B: lists the kernels only in A, only in B and those whose sources
# differ (with the first lines of their diff), checking each side's files
# against its MANIFEST. Exit codes: 0 identical; 1 a difference; 2 usage or
# no collection there. Collecting exits 1 when a tool fails or a test
# executable dies (a partial collection would compare as missing kernels);
# failed tests are warnings in SUMMARY (a failed compile stops its test, so
# kernels it would have built next are missing; the tests' 2 s compile bound
# fails on a loaded machine and loses nothing).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
me="kernel-sources.sh"

usage() {
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
die() {
  echo "$me: error: $*" >&2
  exit 1
}

# ---------------------------------------------------------------- compare
compare() {
  local a="$1" b="$2"
  for d in "$a" "$b"; do
    if ! [ -d "$d/sources" ] || ! [ -f "$d/MANIFEST" ]; then
      echo "$me: error: expected a collection (sources/ and MANIFEST) in '$d'" >&2
      exit 2
    fi
  done
  python3 - "$a" "$b" <<'EOF'
import difflib, hashlib, os, sys

def files(root):
    out = {}
    src = os.path.join(root, "sources")
    for dirpath, _, names in os.walk(src):
        for n in names:
            p = os.path.join(dirpath, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, src)] = hashlib.sha256(f.read()).hexdigest()
    return out

def manifest(root):
    out = {}
    with open(os.path.join(root, "MANIFEST")) as f:
        for line in f:
            h, _, name = line.rstrip("\n").partition("  ")
            out[name] = h
    return out

def header(root):
    p = os.path.join(root, "SUMMARY")
    if not os.path.exists(p):
        return "(no SUMMARY)"
    with open(p) as f:
        lines = [l.rstrip("\n") for l in f if l.startswith(("build", "commit"))]
    return "; ".join(lines)

a, b = sys.argv[1], sys.argv[2]
status = 0
fa, fb = files(a), files(b)
for root, fs in ((a, fa), (b, fb)):
    m = manifest(root)
    if m != fs:
        bad = sorted(set(m) ^ set(fs) | {k for k in set(m) & set(fs) if m[k] != fs[k]})
        print(f"{root}: {len(bad)} file(s) disagree with its MANIFEST "
              f"(edited after collection?): " + ", ".join(bad[:5]) +
              (" ..." if len(bad) > 5 else ""))
        status = 1
print(f"A: {a}  [{header(a)}]")
print(f"B: {b}  [{header(b)}]")

def groups(fs):
    g = {}
    for k in fs:
        g.setdefault(k.split("/", 1)[0], 0)
        g[k.split("/", 1)[0]] += 1
    return g

ga, gb = groups(fa), groups(fb)
for g in sorted(set(ga) | set(gb)):
    print(f"  {g:24} A {ga.get(g, 0):5}   B {gb.get(g, 0):5}")
onlyA = sorted(set(fa) - set(fb))
onlyB = sorted(set(fb) - set(fa))
differ = sorted(k for k in set(fa) & set(fb) if fa[k] != fb[k])
for title, lst in (("only in A", onlyA), ("only in B", onlyB),
                   ("sources differ", differ)):
    if lst:
        status = 1
        print(f"{title}: {len(lst)}")
        for k in lst:
            print(f"  {k}")
shown = 0
for k in [d for d in differ if not d.endswith(".cubin")][:3]:
    with open(os.path.join(a, "sources", k), errors="replace") as f:
        ta = f.readlines()
    with open(os.path.join(b, "sources", k), errors="replace") as f:
        tb = f.readlines()
    d = list(difflib.unified_diff(ta, tb, "A/" + k, "B/" + k, n=1))
    text = "".join(d[:20])
    print(text if text.endswith("\n") else text + "\n", end="")
    if len(d) > 20:
        print(f"  ... (diff -u {a}/sources/{k} {b}/sources/{k})")
if status == 0:
    print(f"identical: {len(fa)} sources")
else:
    print(f"DIFFERENT: {len(onlyA)} only in A, {len(onlyB)} only in B, "
          f"{len(differ)} differ (of {len(fa)} / {len(fb)})")
sys.exit(status)
EOF
}

if [ "${1:-}" = compare ]; then
  [ $# -eq 3 ] || usage
  compare "$2" "$3"
  exit $?
fi

# ---------------------------------------------------------------- collect
build="$root/build"
jobs="$(nproc)"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) [ $# -ge 2 ] || usage; build="$2"; shift 2 ;;
    -j) [ $# -ge 2 ] || usage; jobs="$2"; shift 2 ;;
    -h | --help) usage ;;
    -*) echo "$me: unknown option '$1'" >&2; usage ;;
    *) [ -z "$out" ] || usage; out="$1"; shift ;;
  esac
done
[ -n "$out" ] || usage
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "expected a positive number for -j, found '$jobs'"
[ -d "$build" ] || die "no build directory '$build' (see --build)"
build="$(cd "$build" && pwd)"
bin="$build/bin"
for t in fp8-run fp8-codegen; do
  [ -x "$bin/$t" ] || die "expected $bin/$t (build the tools first)"
done
for t in cc python3 sha256sum; do
  command -v "$t" >/dev/null || die "expected '$t' on the PATH"
done
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
  die "'$out' exists and is not empty"
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$out/.work"
mkdir -p "$out/sources" "$out/logs" "$work"
trap 'rm -rf "$work"' EXIT

# What the generator reads from the environment changes the kernels.
while read -r v; do unset "$v"; done < <(compgen -e | grep '^FP8_' || true)
export FP8_CACHE_DIR=off

warnings=()
warn() {
  echo "$me: warning: $*" >&2
  warnings+=("$*")
}
summary=()

# merge SOURCE DIR...: each DIR holds sources by name (a subpath); the union
# goes to sources/SOURCE; one name with two texts keeps both, named by hash.
merge() {
  local src="$1"
  shift
  python3 - "$out/sources/$src" "$@" <<'EOF' || return 1
import hashlib, os, sys
dest, units = sys.argv[1], sys.argv[2:]
by_name = {}
for u in units:
    for dirpath, _, names in os.walk(u):
        for n in names:
            p = os.path.join(dirpath, n)
            with open(p, "rb") as f:
                data = f.read()
            rel = os.path.relpath(p, u)
            by_name.setdefault(rel, {})[hashlib.sha256(data).hexdigest()] = data
os.makedirs(dest, exist_ok=True)
for rel, texts in sorted(by_name.items()):
    for h, data in texts.items():
        name = rel
        if len(texts) > 1:
            stem, ext = os.path.splitext(rel)
            name = f"{stem}~{h[:12]}{ext}"
        p = os.path.join(dest, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
for rel, texts in sorted(by_name.items()):
    if len(texts) > 1:
        print(f"COLLISION {rel} {len(texts)}")
EOF
}
# note_collisions SOURCE OUTPUT: warns for merge's COLLISION lines.
note_collisions() {
  local line
  while read -r line; do
    if [ -n "$line" ]; then
      warn "$1: one name, different sources: ${line#COLLISION }"
    fi
  done <<<"$2"
}
count() { find "$out/sources/$1" -type f 2>/dev/null | wc -l; }

# cache_cubins CACHE DIR: the cubin of each entry of kernel cache CACHE
# (runtime/KernelCache.cpp: a 48-byte header, then "key=...", "name=...",
# ... lines, an empty line, the cubin) as DIR/<kernel>.cubin.
cache_cubins() {
  python3 - "$1" "$2" <<'EOF' || return 1
import os, sys
cache, dest = sys.argv[1], sys.argv[2]
os.makedirs(dest, exist_ok=True)
n = 0
for dirpath, _, names in os.walk(cache):
    for f in names:
        if not f.endswith(".cubin"):
            continue
        with open(os.path.join(dirpath, f), "rb") as fh:
            data = fh.read()
        head, sep, cubin = data[48:].partition(b"\n\n")
        fields = dict(l.split(b"=", 1) for l in head.split(b"\n") if b"=" in l)
        name = fields.get(b"name", b"").decode()
        if not sep or not cubin or not name.replace("_", "").isalnum():
            sys.exit(f"{f}: not a kernel cache entry")
        with open(os.path.join(dest, name + ".cubin"), "wb") as out:
            out.write(cubin)
        n += 1
if n == 0:
    sys.exit(f"no entries in {cache}")
EOF
}

# ---- 1. the NVRTC compile matrices, through a recording nvrtcCreateProgram
start=$SECONDS
cat >"$work/record.c" <<'EOF'
/* Preloaded into the compile-matrix tests: writes every program handed to
   nvrtcCreateProgram to $KSRC_SPOOL/k-<pid>-<n>/<name>, and each header it
   is given, once per process, to $KSRC_SPOOL/h-<pid>/<header name>; then
   calls NVRTC's own. Any failure to record aborts: a silent gap would read
   as "identical". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct _nvrtcProgram *nvrtcProgram;
typedef int nvrtcResult;
typedef nvrtcResult (*CreateFn)(nvrtcProgram *, const char *, const char *,
                                int, const char *const *, const char *const *);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static char *seen[256];
static int nseen;

static void fail(const char *what, const char *path) {
  fprintf(stderr, "kernel-sources record: %s '%s': %s\n", what, path,
          strerror(errno));
  abort();
}

/* mkdir -p of the directories above path. */
static void parents(char *path) {
  for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
    *p = 0;
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
      fail("cannot create", path);
    *p = '/';
  }
}

static void save(const char *dir, const char *name, const char *text) {
  char path[4096];
  if (strstr(name, "..") || name[0] == '/')
    fail("refusing the name", name);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  parents(path);
  FILE *f = fopen(path, "wb");
  if (!f)
    fail("cannot write", path);
  size_t n = strlen(text);
  if (fwrite(text, 1, n, f) != n || fclose(f) != 0)
    fail("cannot write", path);
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src,
                               const char *name, int numHeaders,
                               const char *const *headers,
                               const char *const *includeNames) {
  static CreateFn real;
  const char *spool = getenv("KSRC_SPOOL");
  pthread_mutex_lock(&lock);
  if (!real && !(real = (CreateFn)dlsym(RTLD_NEXT, "nvrtcCreateProgram")))
    fail("no nvrtcCreateProgram after this library", "libnvrtc");
  if (spool && src) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/k-%d-%ld", spool, (int)getpid(), counter++);
    save(dir, name ? name : "unnamed.cu", src);
    snprintf(dir, sizeof dir, "%s/h-%d", spool, (int)getpid());
    for (int i = 0; i < numHeaders; ++i) {
      int known = 0;
      for (int j = 0; j < nseen && !known; ++j)
        known = !strcmp(seen[j], includeNames[i]);
      if (known)
        continue;
      save(dir, includeNames[i], headers[i]);
      if (nseen < 256)
        seen[nseen++] = strdup(includeNames[i]);
    }
  }
  pthread_mutex_unlock(&lock);
  return real(prog, src, name, numHeaders, headers, includeNames);
}
EOF
cc -shared -fPIC -O1 -o "$work/record.so" "$work/record.c" -ldl -lpthread ||
  die "cannot build the recording library with cc"

filter='*/Sm90Compile.*:*/Sm90Overlap.*:*/Sm100Compile.*:*/RecipeSampleCompile.*:*/ElementwiseCompile.*'
spool="$work/spool"
mkdir -p "$spool"
listed=0
ran=0
for exe in "$bin"/*-tests; do
  [ -x "$exe" ] || continue
  name="$(basename "$exe")"
  n=$("$exe" --gtest_list_tests --gtest_filter="$filter" 2>/dev/null | grep -c '^  ' || true)
  [ "$n" -gt 0 ] || continue
  listed=$((listed + n))
  echo "$me: matrices: $name, $n tests in $jobs shards"
  pids=()
  for ((i = 0; i < jobs; i++)); do
    KSRC_SPOOL="$spool" LD_PRELOAD="$work/record.so" \
      GTEST_TOTAL_SHARDS="$jobs" GTEST_SHARD_INDEX="$i" \
      "$exe" --gtest_filter="$filter" >"$out/logs/$name.$i.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    rc=0
    wait "${pids[$i]}" || rc=$?
    log="$out/logs/$name.$i.log"
    if [ "$rc" -gt 1 ]; then
      die "$name (shard $i) ended with status $rc: sources are missing (see $log)"
    fi
    r=$(sed -n 's/^\[==========\] \([0-9]*\) tests\{0,1\} from .* ran\..*/\1/p' "$log")
    [ -n "$r" ] || die "$name (shard $i) did not finish its tests (see $log)"
    ran=$((ran + r))
    if [ "$rc" -ne 0 ]; then
      warn "$name (shard $i): $(grep -c '^\[  FAILED  \] .*(' "$log") tests failed (see $log): the compile-time bound fails under load and loses nothing, a failed compile stops its test before the kernels it would build next"
    fi
  done
done
[ "$listed" -gt 0 ] || die "no compile-matrix tests in $bin/*-tests (filter $filter)"
[ "$ran" -eq "$listed" ] || die "the matrices listed $listed tests but ran $ran"
c=$(merge matrices "$spool"/k-*) || die "cannot merge the matrices' sources"
note_collisions matrices "$c"
c=$(merge headers "$spool"/h-*) || die "cannot merge the headers"
note_collisions headers "$c"
t=$((SECONDS - start))
summary+=("matrices          $(count matrices) kernels from $ran tests, ${t} s (NVRTC compiles them)")
summary+=("headers           $(count headers) kernel headers given to NVRTC")

# ---- 2. the committed plans, fp8-run --compile-only
plans=("$root"/examples/plans/*.json "$root"/test/models/Inputs/*.json)
for m in 512 4096; do
  start=$SECONDS
  units=()
  cunits=()
  for plan in "${plans[@]}"; do
    base="$(basename "$plan" .json)"
    dims=()
    for d in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1])).get("dims", [])))' "$plan"); do
      dims+=(--dim "$d=$m")
    done
    unit="$work/plans-M$m/$base"
    cache="$work/cache-M$m/$base"
    cunit="$work/cubins-plans-M$m/$base"
    mkdir -p "$unit" "$cache"
    # (a fresh cache: every kernel compiled, its source dumped, its cubin kept)
    FP8_CACHE_DIR="$cache" FP8_DUMP_SOURCE="$unit" "$bin/fp8-run" "$plan" \
      "${dims[@]}" --compile-only >"$out/logs/plan-$base-M$m.log" 2>&1 ||
      die "fp8-run $plan ${dims[*]} --compile-only failed (see $out/logs/plan-$base-M$m.log)"
    [ -n "$(ls -A "$unit")" ] || die "fp8-run $plan wrote no source"
    cache_cubins "$cache" "$cunit" || die "cannot read the cubins of $plan's kernel cache"
    units+=("$unit")
    cunits+=("$cunit")
  done
  c=$(merge "plans-M$m" "${units[@]}") || die "cannot merge the plans' sources"
  note_collisions "plans-M$m" "$c"
  c=$(merge "cubins-plans-M$m" "${cunits[@]}") || die "cannot merge the plans' cubins"
  note_collisions "cubins-plans-M$m" "$c"
  t=$((SECONDS - start))
  summary+=("$(printf '%-17s %s kernels from %s plans, %s s' "plans-M$m" "$(count "plans-M$m")" "${#plans[@]}" "$t")")
  summary+=("$(printf '%-17s %s cubins' "cubins-plans-M$m" "$(count "cubins-plans-M$m")")")
done

# ---- 3. the benchmark shapes: what fp8-bench compiles, via fp8-codegen
shapes="$root/bench/shapes.json"
mapfile -t dense < <(python3 -c '
import json, sys
for s in json.load(open(sys.argv[1]))["dense"]:
    print(s["M"], s["N"], s["K"])' "$shapes")
[ "${#dense[@]}" -gt 0 ] || die "no dense shapes in $shapes"
for recipe in deepseek per-tensor; do
  start=$SECONDS
  units=()
  cunits=()
  for shape in "${dense[@]}"; do
    read -r M N K <<<"$shape"
    args=(--arch sm_90a --recipe "$recipe" --promotion 128 --out bf16
          --m "$M" --n "$N" --k "$K" --sms 132)
    log="$out/logs/bench-$recipe-${M}x${N}x${K}.log"
    "$bin/fp8-codegen" "${args[@]}" --emit info >"$log" 2>&1 ||
      die "fp8-codegen ${args[*]} --emit info failed (see $log)"
    kernel=$(sed -n 's/^kernel  *//p' "$log")
    [[ "$kernel" =~ ^[A-Za-z0-9_]+$ ]] || die "no kernel name in $log"
    unit="$work/bench-$recipe/${M}x${N}x${K}"
    mkdir -p "$unit"
    "$bin/fp8-codegen" "${args[@]}" --emit cuda -o "$unit/$kernel.cu" ||
      die "fp8-codegen ${args[*]} --emit cuda failed"
    cunit="$work/cubins-bench-$recipe/${M}x${N}x${K}"
    mkdir -p "$cunit"
    "$bin/fp8-codegen" "${args[@]}" --emit cubin -o "$cunit/$kernel.cubin" ||
      die "fp8-codegen ${args[*]} --emit cubin failed"
    units+=("$unit")
    cunits+=("$cunit")
  done
  c=$(merge "bench-$recipe" "${units[@]}") || die "cannot merge the bench sources"
  note_collisions "bench-$recipe" "$c"
  c=$(merge "cubins-bench-$recipe" "${cunits[@]}") || die "cannot merge the bench cubins"
  note_collisions "cubins-bench-$recipe" "$c"
  t=$((SECONDS - start))
  summary+=("$(printf '%-17s %s kernels from %s shapes, %s s' "bench-$recipe" "$(count "bench-$recipe")" "${#dense[@]}" "$t")")
  summary+=("$(printf '%-17s %s cubins' "cubins-bench-$recipe" "$(count "cubins-bench-$recipe")")")
done

# ---- manifest and summary
(cd "$out/sources" && find . -type f -printf '%P\0' | LC_ALL=C sort -z |
  xargs -0 sha256sum) >"$out/MANIFEST"
total=$(wc -l <"$out/MANIFEST")
kernels=$(grep -vcE '  (headers|cubins-[^/]*)/' "$out/MANIFEST" || true)
cubins=$(grep -cE '  cubins-[^/]*/' "$out/MANIFEST" || true)
commit_of() {
  local c
  c=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null) || {
    echo unknown
    return
  }
  [ -z "$(git -C "$1" status --porcelain -uno 2>/dev/null)" ] || c="$c (modified)"
  echo "$c"
}
srcdir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
buildcommit=unknown
[ -z "$srcdir" ] || buildcommit="$(commit_of "$srcdir")"
{
  echo "build    $build"
  echo "commit   the build's source tree ${srcdir:-unknown} now at $buildcommit; plans and shapes from $root at $(commit_of "$root")"
  echo "date     $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  printf '%s\n' "${summary[@]}"
  echo "total             $kernels kernel sources (+ $((total - kernels - cubins)) headers, $cubins cubins)"
  for w in "${warnings[@]+"${warnings[@]}"}"; do echo "warning  $w"; done
} >"$out/SUMMARY"
cat "$out/SUMMARY"
