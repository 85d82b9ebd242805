//===- fp8-codegen.cpp - Emit and inspect GEMM kernels without MLIR -------===//
//
// KernelSpec -> CUDA C++ / PTX / cubin / a report, for sm_90a and sm_100a,
// straight through codegen/ and NVRTC (no MLIR, no GPU):
//
//   fp8-codegen --arch sm_100a --recipe mx --n 7168 --k 2048 --emit info
//   fp8-codegen --spec kernel.json --emit ptx -o kernel.ptx
//
// The spec comes from a recipe preset and a shape (the tile from the
// heuristic, overridden key by key by --tile) or from a KernelSpec JSON file.
// Exit codes: 0 success, 1 failure (a --spec file that cannot be read, does
// not parse or that the generator rejects; compiling; writing), 2 bad
// arguments (unknown options, missing or malformed values, a spec built from
// the options that the generator rejects).
//
//===----------------------------------------------------------------------===//

#include "codegen/Gemm.h"
#include "codegen/Sm100Gemm.h"
#include "codegen/Sm100ScaleLayout.h"
#include "codegen/Sm90Gemm.h"
#include "codegen/TileOverride.h"
#include "core/Args.h"
#include "core/Env.h"
#include "core/RecipePresets.h"
#include "core/Target.h"
#include "runtime/Nvrtc.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

using namespace fp8;

namespace {

enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

int fail(const std::string &message, int code) {
  std::fprintf(stderr, "fp8-codegen: error: %s\n", message.c_str());
  return code;
}

const char *kUsage =
    "usage: fp8-codegen [--arch sm_90a|sm_100a] [--recipe R] --n N --k K\n"
    "                   [options] [--emit cuda|ptx|cubin|info|spec] [-o "
    "FILE]\n"
    "       fp8-codegen --spec FILE.json [--emit ...] [-o FILE]\n"
    "\n"
    "Emits and inspects the scaled FP8 GEMM kernel of a KernelSpec, without\n"
    "MLIR and without a GPU (NVRTC compiles the cubin on this machine).\n"
    "\n"
    "recipes (--recipe):\n"
    "  mx          A and B 1x32 with UE8M0 scales; sm_100a only\n"
    "              (block-scaled tcgen05.mma); promotion 0\n"
    "  deepseek    A 1x128, B 128x128 (DeepSeek-V3). sm_90a: f32 scales,\n"
    "              promotion 128; sm_100a: f32_pow2 scales (UE8M0 block\n"
    "              scales of the MMA), promotion 32\n"
    "  per-tensor  one f32 scale per operand. sm_90a: promotion 128;\n"
    "              sm_100a: applied in the epilogue, promotion 0\n"
    "\n"
    "options:\n"
    "  --arch A          sm_90a or sm_100a (default sm_90a)\n"
    "  --recipe R        mx, deepseek or per-tensor (default deepseek)\n"
    "  --n N, --k K      the GEMM's N and K (required without --spec)\n"
    "  --m M             rows, for the tile heuristic (default 4096; the\n"
    "                    kernel takes M at launch; grouped_contiguous: all\n"
    "                    groups' rows, grouped_masked: a group's expected\n"
    "                    rows)\n"
    "  --kind KIND       dense (default), grouped_contiguous or\n"
    "                    grouped_masked (MoE experts; sm_90a)\n"
    "  --groups G        the groups of a grouped kind (default 1)\n"
    "  --format-a F      e4m3fn or e5m2 (default e4m3fn); also --format-b\n"
    "  --scale S         override the preset's scale format: f32, f32_pow2\n"
    "                    or ue8m0\n"
    "  --out T           bf16 or f32 (default bf16)\n"
    "  --accumulate      D = A * B^T + C\n"
    "  --promotion P     override the preset's promotion interval\n"
    "  --tile JSON       tile keys over the heuristic's choice, e.g.\n"
    "                    '{\"block_n\": 128, \"cta_group\": 2, "
    "\"cluster_m\": 2}'\n"
    "  --sms N           SMs for the heuristic (default 132 on sm_90a, 148\n"
    "                    on sm_100a)\n"
    "  --spec FILE       a KernelSpec JSON file instead of the options above\n"
    "  --scale-tma W     sm_90a: whose K-varying scales come by TMA with\n"
    "                    each pipeline stage: ab, a, b or none (default:\n"
    "                    all that can, f32 scales varying along K); the\n"
    "                    kernel's consumers load the others. The runtime\n"
    "                    picks this per call from the scale tensors' layout\n"
    "  --emit E          cuda (default): the generated translation unit;\n"
    "                    ptx: NVRTC's PTX; cubin: the binary (needs -o);\n"
    "                    info: spec, launch metadata and NVRTC statistics;\n"
    "                    spec: the KernelSpec JSON (input for --spec)\n"
    "  -o FILE           write there instead of standard output\n"
    "\n"
    "Exit codes: 0 success; 1 failure: a --spec file that cannot be read,\n"
    "parsed or emitted, compiling, writing; 2 bad arguments: unknown\n"
    "options, missing or malformed values, a spec from the options that the\n"
    "generator rejects.\n";

std::vector<OptionSpec> optionSpecs() {
  return {
      {"arch", "A", "", "sm_90a"},
      {"recipe", "R", "", "deepseek"},
      {"n", "N", "", ""},
      {"k", "K", "", ""},
      {"m", "M", "", "4096"},
      {"kind", "KIND", "", "dense"},
      {"groups", "G", "", "1"},
      {"format-a", "F", "", "e4m3fn"},
      {"format-b", "F", "", "e4m3fn"},
      {"scale", "S", "", ""},
      {"out", "T", "", "bf16"},
      {"accumulate", "", "", ""},
      {"promotion", "P", "", ""},
      {"tile", "JSON", "", ""},
      {"sms", "N", "", ""},
      {"spec", "FILE", "", ""},
      {"scale-tma", "W", "", ""},
      {"emit", "E", "", "cuda"},
      {"output", "FILE", "", ""},
  };
}

Expected<DType> fp8Format(const Args &args, const char *name) {
  const std::string v = args.get(name);
  auto t = parseDType(v);
  if (!t || !isFP8(*t))
    return errorf("expected e4m3fn or e5m2 for --", name, ", found '", v, "'");
  return *t;
}

/// The spec of a preset recipe on `arch`.
Expected<KernelSpec> specFromOptions(const Args &args, std::string &reason) {
  KernelSpec s;
  auto arch = parseArch(args.get("arch"));
  if (!arch)
    return errorf("expected sm_90a or sm_100a for --arch, found '",
                  args.get("arch"), "'");
  s.arch = *arch;
  if (!args.has("n") || !args.has("k"))
    return errorf("expected --n and --k (or --spec FILE.json)");
  auto n = args.getInt("n", 1, (int64_t(1) << 31) - 1);
  if (!n)
    return n.status();
  auto k = args.getInt("k", 1, (int64_t(1) << 31) - 1);
  if (!k)
    return k.status();
  auto m = args.getInt("m", 1, (int64_t(1) << 31) - 1);
  if (!m)
    return m.status();
  s.n = *n;
  s.k = *k;
  s.m = args.has("m") ? *m : kDynamic;
  auto kind = parseGemmKind(args.get("kind"));
  if (!kind)
    return errorf("expected dense, grouped_contiguous or grouped_masked for "
                  "--kind, found '",
                  args.get("kind"), "'");
  s.kind = *kind;
  auto groups = args.getInt("groups", 1, (int64_t(1) << 31) - 1);
  if (!groups)
    return groups.status();
  s.groups = *groups;
  auto fa = fp8Format(args, "format-a");
  if (!fa)
    return fa.status();
  auto fb = fp8Format(args, "format-b");
  if (!fb)
    return fb.status();
  s.a.format = *fa;
  s.b.format = *fb;
  auto out = parseDType(args.get("out"));
  if (!out || (*out != DType::BF16 && *out != DType::F32))
    return errorf("expected bf16 or f32 for --out, found '", args.get("out"),
                  "'");
  s.out = *out;
  s.accumulate = args.has("accumulate");

  const std::string recipe = args.get("recipe");
  const std::optional<RecipePreset> preset = findRecipePreset(recipe, s.arch);
  if (!preset)
    return errorf("expected ", recipePresetNames(), " for --recipe, found '",
                  recipe, "'");
  s.a.granularity = preset->a;
  s.b.granularity = preset->b;
  s.promotionInterval = preset->promotionInterval;
  if (args.has("scale")) {
    auto f = parseScaleFormat(args.get("scale"));
    if (!f)
      return errorf("expected f32, f32_pow2 or ue8m0 for --scale, found '",
                    args.get("scale"), "'");
    s.a.granularity.scale = s.b.granularity.scale = *f;
  }
  if (args.has("promotion")) {
    auto p = args.getInt("promotion", 0, int64_t(1) << 30);
    if (!p)
      return p.status();
    s.promotionInterval = promotionFromInt(*p);
  }

  // The tile: the heuristic's choice for M (default 4096), then --tile's keys.
  int sms = targetInfo(s.arch).smCount;
  if (args.has("sms")) {
    auto v = args.getInt("sms", 1, 1024);
    if (!v)
      return v.status();
    sms = int(*v);
  }
  KernelSpec probe = s;
  probe.m = *m;
  ConfigChoice choice = selectConfig(probe, sms);
  s.tile = choice.tile;
  reason = choice.reason;
  if (args.has("tile")) {
    auto tile = overrideTile(s, args.get("tile"), "--tile");
    if (!tile)
      return tile.status();
    s.tile = *tile;
    reason += " (overridden by --tile)";
  }
  return s;
}

std::string swizzleName(int bytes) {
  return bytes == 0 ? "none" : std::to_string(bytes) + "B";
}

std::string operandName(TmaPlan::Operand o) {
  switch (o) {
  case TmaPlan::Operand::A:
    return "A";
  case TmaPlan::Operand::B:
    return "B";
  case TmaPlan::Operand::D:
    return "D";
  case TmaPlan::Operand::ScaleA:
    return "scales of A";
  case TmaPlan::Operand::ScaleB:
    return "scales of B";
  case TmaPlan::Operand::C:
    return "C";
  }
  return "?";
}

/// The --emit info report.
std::string info(const KernelSpec &s, const GeneratedKernel &g,
                 const CompiledKernel &c, const std::string &reason) {
  std::ostringstream os;
  const LaunchInfo &l = g.launch;
  os << "kernel      " << g.name << "\n"
     << "arch        " << toString(s.arch)
     << (s.arch == Arch::SM100a
             ? " (compile-verified only: never run on a GPU, see "
               "docs/blackwell.md)"
             : "")
     << "\n"
     << "recipe      A " << toString(s.a.format) << " "
     << toString(s.a.granularity) << ", B " << toString(s.b.format) << " "
     << toString(s.b.granularity) << ", promotion "
     << promotionToInt(s.promotionInterval) << ", out " << toString(s.out)
     << (s.accumulate ? " + C" : "") << "\n"
     << "shape       N " << s.n << ", K " << s.k << ", M "
     << (s.m == kDynamic ? std::string("at launch") : std::to_string(s.m))
     << "\n"
     << "tile        " << toJSON(s.tile) << "\n";
  if (!reason.empty())
    os << "heuristic   " << reason << "\n";
  os << "launch      " << l.threads << " threads, " << l.sharedBytes
     << " bytes of dynamic shared memory, cluster " << l.clusterX << " ("
     << l.clusterM << "x" << l.clusterN << "), "
     << (l.persistent ? "persistent" : "one CTA per tile") << ", D by "
     << (l.tmaStore ? "TMA store" : "predicated stores") << "\n";
  for (size_t i = 0; i < l.tma.size(); ++i) {
    const TmaPlan &t = l.tma[i];
    os << "tma[" << i << "]      " << operandName(t.operand) << ": box "
       << t.boxInner << " x " << t.boxOuter << " of " << t.elemBytes
       << "-byte elements, swizzle " << swizzleName(t.swizzleBytes) << "\n";
  }
  if (l.tailBox && s.m != kDynamic)
    os << "tail box    the last M tile loads A and its scales in boxes "
       << fp8k::gemmABoxRows<int64_t>(s.m, l.blockM)
       << " rows high (two more descriptors)\n";
  if (s.arch == Arch::SM100a) {
    Sm100Plan p = *planSm100Gemm(s);
    std::ostringstream idesc;
    idesc << "0x" << std::hex << p.idesc;
    os << "mma         tcgen05.mma.cta_group::" << s.tile.ctaGroup
       << (p.blockScaled ? ".kind::mxf8f6f4.block_scale.block32"
                         : ".kind::f8f6f4")
       << ", M " << p.mmaM << " x N " << s.tile.blockN << " x K 32, idesc "
       << idesc.str() << "\n"
       << "tmem        " << p.tmemColumns << " columns: " << p.accStages
       << " FP32 accumulator" << (p.accStages > 1 ? "s" : "") << " of "
       << s.tile.blockN << " columns"
       << (p.blockScaled
               ? ", 2 scale slots of " + std::to_string(4 + 4 * p.sfbAtoms) +
                     " columns (A: 4, B: " + std::to_string(4 * p.sfbAtoms) +
                     ")"
               : "")
       << "\n"
       << "scales      "
       << (p.blockScaled
               ? "UE8M0 block scales in the layout of "
                 "codegen/Sm100ScaleLayout.h (" +
                     std::to_string(sm100ScaleBytes(s.n, s.k)) + " bytes for B)"
               : std::string("applied in the epilogue"))
       << "\n";
  }
  os << "nvrtc       " << std::fixed << std::setprecision(3) << c.compileSeconds
     << " s (NVRTC " << nvrtcVersionString() << "), " << c.registers
     << " registers, " << c.spillBytes << " bytes spilled, " << c.stackBytes
     << " bytes of stack, cubin " << c.cubin.size() << " bytes"
     << (c.wgmmaSerialized ? "; ptxas serialised the wgmmas (Potential "
                             "Performance Loss)"
                           : "")
     << "\n"
     << "spec        " << toJSON(s) << "\n";
  return os.str();
}

int writeOutput(const std::string &path, const std::string &text, bool binary) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0
               ? kExitOk
               : fail("cannot write to standard output", kExitFailure);
  }
  std::ofstream out(path, binary ? std::ios::binary : std::ios::out);
  out.write(text.data(), std::streamsize(text.size()));
  out.close();
  if (!out)
    return fail("cannot write '" + path + "'", kExitFailure);
  return kExitOk;
}

} // namespace

int main(int argc, char **argv) {
  if (Status env = env::checkEnvironment(); !env)
    return fail(env.message(), kExitUsage);
  // "-o FILE" is the one short option; the parser knows long ones.
  std::vector<std::string> storage;
  std::vector<char *> av;
  for (int i = 0; i < argc; ++i) {
    const char *a = argv[i];
    if (!std::strcmp(a, "--help") || !std::strcmp(a, "-h")) {
      std::fputs(kUsage, stdout);
      return kExitOk;
    }
    storage.push_back(!std::strcmp(a, "-o") ? "--output" : a);
  }
  for (auto &s : storage)
    av.push_back(s.data());
  Args args("fp8-codegen", optionSpecs());
  if (Status st = args.parse(int(av.size()), av.data(), 1); !st)
    return fail(st.message() + " (see --help)", kExitUsage);

  const std::string emit = args.get("emit");
  if (emit != "cuda" && emit != "ptx" && emit != "cubin" && emit != "info" &&
      emit != "spec")
    return fail("expected cuda, ptx, cubin, info or spec for --emit, found '" +
                    emit + "'",
                kExitUsage);
  const std::string output = args.get("output");
  if (emit == "cubin" && output.empty())
    return fail("expected -o FILE with --emit cubin (a binary)", kExitUsage);

  std::string reason;
  Expected<KernelSpec> spec = Status::error("unset");
  if (args.has("spec")) {
    for (const char *o :
         {"arch", "recipe", "n", "k", "m", "format-a", "format-b", "scale",
          "out", "accumulate", "promotion", "tile", "sms"})
      if (args.has(o))
        return fail(std::string("expected no --") + o +
                        " with --spec (the file states the whole spec)",
                    kExitUsage);
    spec = loadKernelSpec(args.get("spec"));
  } else {
    spec = specFromOptions(args, reason);
  }
  // What a --spec file states is input, not an argument: its errors are
  // failures (1); a spec the options describe badly is a usage error (2).
  const int badSpec = args.has("spec") ? kExitFailure : kExitUsage;
  if (!spec)
    return fail(spec.message(), badSpec);
  if (Status st = checkGemmSpec(*spec); !st)
    return fail("the " + std::string(toString(spec->arch)) +
                    " generator rejects this spec: " + st.message(),
                badSpec);
  if (emit == "spec")
    return writeOutput(output, toJSON(*spec, 2) + "\n", false);

  std::optional<int> scaleTma;
  if (args.has("scale-tma")) {
    const std::string w = args.get("scale-tma");
    if (w != "ab" && w != "a" && w != "b" && w != "none")
      return fail("expected ab, a, b or none for --scale-tma, found '" + w +
                      "'",
                  kExitUsage);
    if (spec->arch != Arch::SM90a)
      return fail("--scale-tma applies to sm_90a kernels only", kExitUsage);
    scaleTma = (w.find('a') != std::string::npos ? kSm90ScaleTmaA : 0) |
               (w.find('b') != std::string::npos ? kSm90ScaleTmaB : 0);
  }
  auto kernel = scaleTma ? emitSm90Gemm(*spec, *scaleTma) : emitGemm(*spec);
  if (!kernel)
    return fail(kernel.message(), kExitFailure);
  if (emit == "cuda")
    return writeOutput(output, kernel->source, false);
  if (emit == "ptx") {
    auto ptx = compileToPtx(*kernel);
    if (!ptx)
      return fail(ptx.message(), kExitFailure);
    return writeOutput(output, *ptx, false);
  }
  auto compiled = compileWithNvrtc(*kernel);
  if (!compiled)
    return fail(compiled.message(), kExitFailure);
  if (emit == "cubin")
    return writeOutput(
        output, std::string(compiled->cubin.begin(), compiled->cubin.end()),
        true);
  return writeOutput(output, info(*spec, *kernel, *compiled, reason), false);
}
