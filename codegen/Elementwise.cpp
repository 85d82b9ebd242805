//===- Elementwise.cpp - Quantize, transpose and elementwise kernels ------===//

#include "codegen/Elementwise.h"
#include "codegen/ElementwiseSource.h"

#include "codegen/kernels/elementwise_params.h"
#include "core/RecipeRules.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sstream>

namespace fp8 {

static_assert(sizeof(fp8k::EwParams) == 128,
              "must match codegen/kernels/elementwise.cuh");
static_assert(fp8k::kMaxEwInputs == kMaxProgramInputs,
              "a kernel takes every input a program may read");

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

namespace {
uint64_t fnv1a(const std::string &s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex8(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%08llx",
                static_cast<unsigned long long>(h & 0xFFFFFFFFull));
  return buf;
}

/// "1x128", "wx1", "wxw": the granularity in a C identifier.
std::string granTag(const Granularity &g) {
  auto dim = [](int64_t v) {
    return v == Granularity::kWhole ? std::string("w") : std::to_string(v);
  };
  std::string s = dim(g.rows) + "x" + dim(g.cols);
  if (g.scale == ScaleFormat::F32Pow2)
    s += "p2";
  else if (g.scale == ScaleFormat::UE8M0)
    s += "e8";
  return s;
}

} // namespace

std::string_view toString(AuxKind k) {
  switch (k) {
  case AuxKind::Elementwise:
    return "elementwise";
  case AuxKind::Quantize:
    return "quantize";
  case AuxKind::Transpose:
    return "transpose";
  case AuxKind::Permute:
    return "permute";
  case AuxKind::Unpermute:
    return "unpermute";
  case AuxKind::Reduce:
    return "reduce";
  case AuxKind::Interleave:
    return "interleave";
  }
  return "?";
}

std::optional<AuxKind> parseAuxKind(std::string_view s) {
  for (AuxKind k : {AuxKind::Elementwise, AuxKind::Quantize, AuxKind::Transpose,
                    AuxKind::Permute, AuxKind::Unpermute, AuxKind::Reduce,
                    AuxKind::Interleave})
    if (toString(k) == s)
      return k;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Specs
//===----------------------------------------------------------------------===//

bool ElementwiseSpec::operator==(const ElementwiseSpec &o) const {
  return toJSON(*this) == toJSON(o);
}

std::string ElementwiseSpec::kernelName() const {
  const std::string h = hex8(fnv1a(toJSON(*this)));
  switch (kind) {
  case AuxKind::Elementwise:
    return "fp8_ew_" + std::string(toString(out)) + "_" + h;
  case AuxKind::Quantize:
    return "fp8_quant_" + std::string(tagOf(quant.format)) + "_" +
           granTag(quant.granularity) + (transposed ? "_tr" : "") +
           (quant.mode == ScalingMode::Delayed ? "_delayed" : "") +
           (program.instrs.empty() ? "" : "_fused") +
           (rowSum ? "_rowsum" : "") + "_" + h;
  case AuxKind::Transpose:
    return "fp8_transpose_" + std::string(tagOf(quant.format)) + "_" +
           granTag(quant.granularity) + "_" + h;
  case AuxKind::Permute:
    return "fp8_moe_permute_" + std::string(tagOf(quant.format)) + "_" +
           granTag(quant.granularity) + "_" + h;
  case AuxKind::Unpermute:
    return "fp8_moe_unpermute_" + std::string(toString(out)) + "_" + h;
  case AuxKind::Reduce:
    return "fp8_reduce_rows_" + h;
  case AuxKind::Interleave:
    return "fp8_interleave_rows_" + std::string(toString(out)) + "_" + h;
  }
  return "fp8_aux_" + h;
}

namespace {
/// A quantize whose kernel sums its rows (ElementwiseSpec::rowSum).
Status checkRowSum(const ElementwiseSpec &s) {
  const EwProgram &p = s.program, &r = *s.rowSum;
  FP8_RETURN_IF_ERROR(checkProgram(r));
  const size_t n = p.inputs.size();
  if (n < 2 || p.inputs[n - 1] != DType::F32 ||
      p.broadcastOf(n - 1) != EwBroadcast::Row)
    return errorf("expected the last input of a quantize with a row sum to "
                  "be the f32 sum broadcast along the row, found ",
                  n < 2 ? "none" : toString(p.inputs[n - 1]), " ",
                  toString(p.broadcastOf(n - 1)));
  if (r.inputs.size() != n - 1)
    return errorf("expected the row sum's program to take the quantize's ",
                  n - 1, " tensor inputs, found ", r.inputs.size());
  for (size_t i = 0; i + 1 < n; ++i)
    if (r.inputs[i] != p.inputs[i] || r.broadcastOf(i) != p.broadcastOf(i))
      return errorf("expected input ", i, " of the row sum's program to be ",
                    toString(p.inputs[i]), " ", toString(p.broadcastOf(i)),
                    " as the quantize's, found ", toString(r.inputs[i]), " ",
                    toString(r.broadcastOf(i)));
  if (r.resultType() != DType::F32)
    return errorf("expected the row sum's program to yield f32, found ",
                  toString(r.resultType()));
  const Granularity &g = s.quant.granularity;
  const bool block = g.rows == 1 && g.cols >= 8 && g.cols <= 256 &&
                     (g.cols & (g.cols - 1)) == 0;
  const bool whole = g.rows == 1 && g.cols == Granularity::kWhole;
  if (s.kind != AuxKind::Quantize || (!block && !whole) ||
      s.quant.mode != ScalingMode::Current)
    return errorf("expected a quantize with a row sum to take row blocks "
                  "(1x8 .. 1x256, a power of two, or per_row) with current "
                  "scaling, found ",
                  toString(g),
                  s.quant.mode == ScalingMode::Delayed ? " delayed" : "");
  return Status::ok();
}
} // namespace

size_t programTensorInputs(const ElementwiseSpec &s) {
  return s.program.inputs.size() - (s.rowSum ? 1 : 0);
}

Status checkElementwiseSpec(const ElementwiseSpec &s) {
  if (s.transposed &&
      (s.kind != AuxKind::Quantize || !quantizeUsesColumnPath(s) || s.rowSum))
    return errorf("expected a quantize with transposed output to take R x 1 "
                  "blocks (128x1) with current scaling, found a ",
                  toString(s.kind), " of ", toString(s.quant.granularity),
                  s.quant.mode == ScalingMode::Delayed ? " delayed" : "");
  if (s.kind != AuxKind::Transpose)
    FP8_RETURN_IF_ERROR(checkProgram(s.program));
  if (s.kind == AuxKind::Permute || s.kind == AuxKind::Unpermute ||
      s.kind == AuxKind::Interleave) {
    // The rows move unchanged: the program reads them and nothing else.
    if (!(s.program == EwProgram::identity(s.program.inputs[0])))
      return errorf("expected the program of a ", toString(s.kind),
                    " kernel to be the identity over its rows");
  }
  if (s.kind == AuxKind::Reduce) {
    if (s.out != DType::F32)
      return errorf("expected the row sums of a reduce to be f32, found ",
                    toString(s.out));
    return Status::ok();
  }
  if (s.kind == AuxKind::Interleave) {
    if (s.out != s.program.inputs[0])
      return errorf("expected the interleaved rows to keep their element "
                    "type ",
                    toString(s.program.inputs[0]), ", found ", toString(s.out));
    return Status::ok();
  }
  if (s.kind == AuxKind::Unpermute) {
    if (!isWide(s.out))
      return errorf("expected the unpermute output to be bf16, f16 or f32, "
                    "found ",
                    toString(s.out));
    return Status::ok();
  }
  if (s.kind == AuxKind::Elementwise) {
    if (!isWide(s.out))
      return errorf("expected the elementwise output to be bf16, f16 or f32, "
                    "found ",
                    toString(s.out));
    return Status::ok();
  }
  if (!isFP8(s.quant.format))
    return errorf("expected an FP8 format (e4m3fn or e5m2), found ",
                  toString(s.quant.format));
  if (s.kind == AuxKind::Transpose)
    return checkGranularity(s.quant.granularity, "the transposed granularity");
  if (s.rowSum)
    FP8_RETURN_IF_ERROR(checkRowSum(s));
  if (s.kind == AuxKind::Permute &&
      (s.quant.granularity.rows != 1 || s.quant.mode != ScalingMode::Current))
    return errorf("expected the permuted rows to be quantized in row blocks "
                  "(1xN, per_row, mx) with current scaling, found ",
                  toString(s.quant.granularity),
                  s.quant.mode == ScalingMode::Delayed ? " delayed" : "");
  return checkQuantRecipe(s.quant, "the quantized tensor");
}

std::pair<Shape, Shape> quantizeOutputShapes(const ElementwiseSpec &s,
                                             const Shape &input) {
  Shape codes = input, scales = scaleShapeFor(input, s.quant.granularity);
  if (s.transposed && codes.size() >= 2 && scales.size() >= 2) {
    std::swap(codes[codes.size() - 1], codes[codes.size() - 2]);
    std::swap(scales[scales.size() - 1], scales[scales.size() - 2]);
  }
  return {codes, scales};
}

bool quantizeUsesRowPath(const ElementwiseSpec &s) {
  return s.kind == AuxKind::Quantize && s.quant.granularity.rows == 1 &&
         s.quant.mode == ScalingMode::Current;
}

namespace {
/// True when the row path launches CTAs of kTableRowThreads (when they fill
/// the grid, elementwiseLaunch): a program with a table, in blocks of 1 x C
/// columns (the whole-row paths split a CTA of 256 among rows), on sm_90a
/// (sm_100a's ptxas spills the SwiGLU quantize at the 64 registers a
/// thread of 1024 allows). `table`: the spec has a tabulatedValue.
bool rowPathTableCtas(const ElementwiseSpec &s, bool table) {
  return table && s.arch == Arch::SM90a && quantizeUsesRowPath(s) &&
         !s.rowSum && s.quant.granularity.cols != Granularity::kWhole;
}
} // namespace

bool quantizeUsesRowSumPath(const ElementwiseSpec &s) {
  return quantizeUsesRowPath(s) && s.rowSum.has_value();
}

bool quantizeUsesColumnPath(const ElementwiseSpec &s) {
  const Granularity &g = s.quant.granularity;
  return s.kind == AuxKind::Quantize && g.cols == 1 && g.rows > 1 &&
         s.quant.mode == ScalingMode::Current;
}

bool quantizeUsesTilePath(const ElementwiseSpec &s) {
  const Granularity &g = s.quant.granularity;
  return s.kind == AuxKind::Quantize && s.quant.mode == ScalingMode::Current &&
         fp8k::tile_path(g.rows, g.cols);
}

bool quantizeIsOnePass(const ElementwiseSpec &s) {
  return quantizeUsesRowPath(s) || quantizeUsesColumnPath(s) ||
         quantizeUsesTilePath(s);
}

std::vector<std::string> elementwiseEntries(const ElementwiseSpec &s) {
  switch (s.kind) {
  case AuxKind::Elementwise:
    return {"elementwise"};
  case AuxKind::Quantize:
    if (quantizeUsesRowSumPath(s)) // by row_sum_entry; one runs
      return {"quantize", "quantize_long_rows", "quantize_longest_rows"};
    if (quantizeIsOnePass(s))
      return {"quantize"};
    return {"amax", "scales", "quantize"};
  case AuxKind::Transpose:
    return {"codes", "scales"};
  case AuxKind::Permute:
    return {"count", "route", "quantize"};
  case AuxKind::Unpermute:
    return {"unpermute"};
  case AuxKind::Reduce:
    return {"reduce"};
  case AuxKind::Interleave:
    return {"interleave"};
  }
  return {};
}

Expected<std::vector<GeneratedKernel>>
emitElementwise(const ElementwiseSpec &s) {
  FP8_RETURN_IF_ERROR(checkElementwiseSpec(s));
  const std::string name = s.kernelName();
  const std::vector<std::string> roles = elementwiseEntries(s);
  std::vector<std::string> names;
  for (const std::string &r : roles)
    names.push_back(roles.size() == 1 ? name : name + "_" + r);

  std::ostringstream os;
  os << "// Generated by the fp8 toolkit (codegen/Elementwise.cpp): do not "
        "edit.\n"
     << "// ElementwiseSpec: " << toJSON(s) << "\n"
     << "#include \"fp8/elementwise.cuh\"\n\n"
     << "namespace fp8k {\n\n";
  const int table = tabulatedValue(s);
  if (s.kind != AuxKind::Transpose)
    emitProgram(os, s.program, s.rowSum ? &*s.rowSum : nullptr, table);
  if (s.kind != AuxKind::Elementwise && s.kind != AuxKind::Unpermute &&
      s.kind != AuxKind::Reduce && s.kind != AuxKind::Interleave) {
    const Granularity &g = s.quant.granularity;
    const bool delayed = s.quant.mode == ScalingMode::Delayed;
    os << "struct Q {\n"
       << "  static constexpr int kFormat = " << typeConst(s.quant.format)
       << ";\n"
       << "  static constexpr int kScaleFmt = " << scaleConst(g.scale) << ";\n"
       << "  static constexpr i64 kBlockRows = " << g.rows << "; // 0 = whole\n"
       << "  static constexpr i64 kBlockCols = " << g.cols << ";\n"
       << "  static constexpr bool kDelayed = " << (delayed ? "true" : "false")
       << ";\n"
       << "  static constexpr int kHistory = " << s.quant.delayed.historyLength
       << ";\n"
       << "  static constexpr int kInterval = "
       << s.quant.delayed.updateInterval << ";\n"
       << "  static constexpr int kMargin = " << s.quant.delayed.margin << ";\n"
       << "  static constexpr int kAlgo = "
       << (s.quant.delayed.algo == AmaxAlgo::MostRecent ? 1 : 0) << ";\n"
       << "  static constexpr bool kTransposed = "
       << (s.transposed ? "true" : "false") << ";\n"
       << "};\n\n";
  }
  os << "} // namespace fp8k\n\n";
  // An entry that evaluates a program with a table fills it first, then
  // waits for the stream's kernel before it (after_prior_grid).
  auto entry = [&](size_t i, const std::string &threads,
                   const std::string &body) {
    os << "extern \"C\" __global__ void __launch_bounds__(" << threads << ")\n"
       << names[i] << "(const fp8k::EwParams p) {\n  ";
    if (table >= 0 && body.find("fp8k::Prog") != std::string::npos)
      os << "fp8k::Prog::prepare(p);\n  ";
    os << "fp8k::after_prior_grid();\n  " << body << "\n}\n\n";
  };
  switch (s.kind) {
  case AuxKind::Elementwise:
    entry(0, "256",
          std::string("fp8k::elementwise_body<fp8k::Prog, fp8k::") +
              typeConst(s.out) + ">(p);");
    break;
  case AuxKind::Quantize: {
    // NOTE: sm_100a's ptxas gives the one-pass quantizes (their blocks'
    // loads in registers) 64 registers and a spill (the RMSNorm row
    // quantize, the 128x128 tile) unless told that two CTAs an SM suffice.
    const char *onePass = s.arch == Arch::SM100a ? "256, 2" : "256";
    if (quantizeUsesRowSumPath(s)) {
      // A CTA holds one row's loads at a time: at least five CTAs an SM of
      // the short rows', two of the long rows' (the same chunks a thread,
      // twice the threads), four of the rows read again.
      entry(0, std::to_string(fp8k::kRowSumThreads) + ", 5",
            "fp8k::quantize_rows_sum_body<fp8k::Prog, fp8k::Q, "
            "fp8k::kReduceThreads / fp8k::kRowSumThreads, "
            "fp8k::kRowSumKept>(p);");
      entry(1, "256, 2",
            "fp8k::quantize_rows_sum_body<fp8k::Prog, fp8k::Q, 1, "
            "fp8k::kRowSumKept>(p);");
      entry(2, "256, 4",
            "fp8k::quantize_rows_sum_body<fp8k::Prog, fp8k::Q, 1, 0>(p);");
    } else if (quantizeUsesRowPath(s)) {
      entry(0,
            rowPathTableCtas(s, table >= 0)
                ? std::to_string(fp8k::kTableRowThreads)
                : std::string(onePass),
            "fp8k::quantize_rows_body<fp8k::Prog, fp8k::Q>(p);");
    } else if (quantizeUsesTilePath(s)) {
      entry(0, onePass, "fp8k::quantize_tile_body<fp8k::Prog, fp8k::Q>(p);");
    } else if (quantizeUsesColumnPath(s)) {
      // The vector path: four CTAs an SM for a plain quantize (84 registers
      // otherwise, two CTAs an SM), two where the program's values are kept
      // (SwiGLU); blocks taller than its own keep more values a thread.
      const std::string bounds =
          !fp8k::col_vec_path(s.quant.granularity.rows, 8) ? "256"
          : isConvertOnly(s.program)
              ? "256, 4"
              : "256, " + std::to_string(fp8k::kColKeptCtasPerSm);
      entry(0, bounds, "fp8k::quantize_cols_body<fp8k::Prog, fp8k::Q>(p);");
    } else {
      entry(0, "256", "fp8k::quantize_amax_body<fp8k::Prog, fp8k::Q>(p);");
      entry(1, "128", "fp8k::quantize_scales_body<fp8k::Q>(p);");
      entry(2, "256", "fp8k::quantize_apply_body<fp8k::Prog, fp8k::Q>(p);");
    }
    break;
  }
  case AuxKind::Permute:
    entry(0, "256", "fp8k::moe_count_body(p);");
    entry(1, "256", "fp8k::moe_route_body(p);");
    entry(2, "256", "fp8k::moe_permute_quantize_body<fp8k::Prog, fp8k::Q>(p);");
    break;
  case AuxKind::Unpermute:
    entry(0, "256",
          std::string("fp8k::moe_unpermute_body<fp8k::Prog, fp8k::") +
              typeConst(s.program.inputs[0]) + ", fp8k::" + typeConst(s.out) +
              ">(p);");
    break;
  case AuxKind::Reduce:
    entry(0, "256", "fp8k::reduce_rows_body<fp8k::Prog>(p);");
    break;
  case AuxKind::Interleave:
    entry(0, "256",
          "fp8k::interleave_rows_body<" + std::to_string(sizeOf(s.out)) +
              ">(p);");
    break;
  case AuxKind::Transpose:
    entry(0, "256", "fp8k::transpose_codes_body(p);");
    entry(1, "256",
          std::string("fp8k::transpose_scales_body<") +
              (s.quant.granularity.scale == ScaleFormat::UE8M0 ? "1" : "4") +
              ">(p);");
    break;
  }
  const std::string source = os.str();

  std::vector<GeneratedKernel> out;
  for (size_t i = 0; i < names.size(); ++i) {
    GeneratedKernel g;
    g.name = names[i];
    g.source = source;
    g.arch = s.arch;
    g.launch.threads = 256;
    g.launch.sharedBytes = 0;
    g.launch.persistent = false;
    g.launch.tmaStore = false;
    out.push_back(std::move(g));
  }
  return out;
}

std::vector<ElementwiseEntryLaunch>
elementwiseLaunches(const ElementwiseSpec &s, int64_t batch, int64_t rows,
                    int64_t cols, int smCount, bool aligned) {
  const std::vector<std::string> entries = elementwiseEntries(s);
  const std::string base = s.kernelName();
  std::vector<ElementwiseEntryLaunch> out;
  for (size_t e = 0; e < entries.size(); ++e) {
    const AuxLaunch l =
        elementwiseLaunch(s, e, batch, rows, cols, smCount, aligned);
    if (l.grid[0] > 0) // (an entry for other shapes)
      out.push_back(
          {entries.size() == 1 ? base : base + "_" + entries[e], e, l});
  }
  return out;
}

AuxLaunch elementwiseLaunch(const ElementwiseSpec &s, size_t entry,
                            int64_t batch, int64_t rows, int64_t cols,
                            int smCount, bool aligned) {
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  auto clamp = [](int64_t v, int64_t hi) {
    return unsigned(std::max<int64_t>(1, std::min(v, hi)));
  };
  const int64_t waves = std::max(1, smCount) * int64_t(32);
  // The grid-striding paths of a program with a table: few enough CTAs that
  // each fills its table once for many elements (elementwise_table.cuh).
  const bool table = tabulatedValue(s) >= 0;
  const int64_t strided =
      table ? std::max(1, smCount) * int64_t(fp8k::kTableCtasPerSm) : waves;
  const std::vector<std::string> roles = elementwiseEntries(s);
  const std::string role = entry < roles.size() ? roles[entry] : "";
  const Granularity &g = s.quant.granularity;
  AuxLaunch l;
  l.block[0] = 256;
  if (s.kind == AuxKind::Elementwise) { // eight elements a thread
    l.grid[0] = clamp(ceilDiv(ceilDiv(batch * rows * cols, 8), 256), strided);
  } else if (s.kind == AuxKind::Reduce) { // a CTA per row
    l.block[0] = fp8k::kReduceThreads;
    l.grid[0] = clamp(batch * rows, INT32_MAX);
  } else if (s.kind == AuxKind::Interleave) { // a thread per 16 bytes
    const int64_t bytes = 2 * batch * rows * cols * sizeOf(s.out);
    l.grid[0] = clamp(ceilDiv(ceilDiv(bytes, 16), 256), waves);
  } else if (s.kind == AuxKind::Unpermute) { // eight elements a thread
    l.grid[0] = clamp(ceilDiv(batch * rows * ((cols + 7) / 8), 256), waves);
  } else if (s.kind == AuxKind::Permute && role != "quantize") {
    // A CTA per chunk of routing slots (batch: the slots); one chunk is
    // counted by the route kernel (grid 0: the count kernel not launched).
    const int64_t chunks = fp8k::moe_route_chunks(batch);
    l.block[0] = fp8k::kRouteThreads;
    l.grid[0] = role == "count" && chunks == 1 ? 0 : clamp(chunks, INT32_MAX);
  } else if (s.kind == AuxKind::Permute) {
    // A warp per token and block, or per 32 / lanes blocks on the vector
    // path (elementwise_moe.cuh).
    const int64_t units = batch * g.scaleCols(cols);
    const int64_t perWarp =
        fp8k::row_blocks_per_warp(g.cols, cols, isConvertOnly(s.program));
    l.grid[0] = clamp(ceilDiv(units, 8 * perWarp), waves * 8);
  } else if (s.kind == AuxKind::Quantize && quantizeUsesRowSumPath(s)) {
    // A CTA per row; only the entry for this row length runs (grid 0: not
    // launched).
    const int e = fp8k::row_sum_entry(cols, aligned);
    l.block[0] = e == 0 ? int(fp8k::kRowSumThreads) : int(fp8k::kReduceThreads);
    l.grid[0] = entry == size_t(e) ? clamp(batch * rows, waves * 8) : 0;
  } else if (s.kind == AuxKind::Quantize && role == "quantize" &&
             quantizeUsesRowPath(s)) {
    // A warp per block, or per 32 / lanes blocks on the vector path.
    // NOTE: one wave of CTAs with the warps striding over the blocks ran the
    // 4096x4096 1x128 quantize in 0.065 ms against 0.054 with a warp per
    // step (H100, docs/results/h100-2026-11-25-vector-paths/).
    // Whole rows in registers: a CTA per 256 / whole_row_threads rows.
    const int rowThreads = fp8k::whole_row_threads(cols);
    const int64_t units = batch * rows * g.scaleCols(cols);
    const int64_t most = table ? strided : waves * 8;
    if (g.cols == Granularity::kWhole && cols % 8 == 0 && rowThreads > 0) {
      l.grid[0] = clamp(ceilDiv(units, 256 / rowThreads), most);
    } else {
      const int64_t perWarp =
          fp8k::row_blocks_per_warp(g.cols, cols, isConvertOnly(s.program));
      const int64_t warps = ceilDiv(units, perWarp);
      // A table's program: the SM's kTableCtasPerSm CTAs of 256 threads as
      // CTAs of kTableRowThreads where the warps fill them all (each CTA
      // fills its table: fewer CTAs, fewer fills); a decode step's few
      // warps keep CTAs of 256, spread over more SMs.
      const int64_t bigWarps = fp8k::kTableRowThreads / 32;
      const int64_t bigCtas = strided * 8 / bigWarps;
      if (rowPathTableCtas(s, table) && warps >= bigCtas * bigWarps) {
        l.block[0] = fp8k::kTableRowThreads;
        l.grid[0] = clamp(bigCtas, INT32_MAX);
      } else {
        l.grid[0] = clamp(ceilDiv(warps, 8), most);
      }
    }
  } else if (s.kind == AuxKind::Quantize && role == "quantize" &&
             quantizeUsesTilePath(s)) { // a CTA per block
    l.grid[0] = clamp(g.scaleCols(cols), INT32_MAX);
    l.grid[1] = clamp(batch * g.scaleRows(rows), 65535);
  } else if (s.kind == AuxKind::Quantize && role == "quantize" &&
             quantizeUsesColumnPath(s)) {
    // A CTA per 64 columns of a block row (the vector path), per 32 (a
    // lane each), or (blocks taller than 256 rows) per 256 columns, a
    // thread each.
    const int64_t perCta =
        fp8k::col_vec_path(g.rows, cols)   ? fp8k::kColVecChunks * 8
        : fp8k::keeps_block_values(g.rows) ? int64_t(fp8k::kColLanes)
                                           : int64_t(fp8k::kColsPerCta);
    const int64_t groups = ceilDiv(cols, perCta);
    const int64_t units = batch * g.scaleRows(rows);
    // A table's program: one wave of kColKeptCtasPerSm CTAs an SM, each
    // filling its table once. Up to 256 rows a block, they stride over
    // the tasks (a column group of a block row) in one flat order
    // (fp8k::ColTasks); taller blocks, over block rows.
    const int64_t wave =
        std::max(1, smCount) * int64_t(fp8k::kColKeptCtasPerSm);
    if (table && fp8k::keeps_block_values(g.rows)) {
      l.grid[0] = clamp(std::min(groups * units, wave), INT32_MAX);
    } else {
      l.grid[0] = clamp(groups, INT32_MAX);
      const int64_t rowCtas =
          table ? std::max<int64_t>(1, wave / groups) : INT32_MAX;
      l.grid[1] = clamp(std::min(units, rowCtas), 65535);
    }
  } else if (s.kind == AuxKind::Quantize && role != "scales" &&
             g.rows == Granularity::kWhole && g.cols == Granularity::kWhole) {
    // Per-tensor amax and codes: flat, eight elements a thread. Pass 1 is
    // one wave (kTensorPassCtasPerSm). Delayed scaling's codes pass runs
    // only where pass 1 guessed the scale wrong (an empty history, a
    // non-finite amax) and returns at once otherwise: eight CTAs of 256 an
    // SM (its 2048 threads) striding, not a CTA per 2048 elements launched
    // to return.
    const bool delayed = s.quant.mode == ScalingMode::Delayed;
    const int64_t sms = std::max(1, smCount);
    const int64_t most =
        role == "amax" ? sms * (delayed ? fp8k::kTensorDelayedPassCtasPerSm
                                        : fp8k::kTensorPassCtasPerSm)
        : delayed      ? sms * 8
                       : strided;
    l.grid[0] =
        clamp(ceilDiv(ceilDiv(rows * cols, 8), 256), std::min(strided, most));
  } else if (role == "amax" ||
             (s.kind == AuxKind::Quantize && role == "quantize")) {
    l.grid[0] = clamp(ceilDiv(cols, fp8k::kColsPerCta), INT32_MAX);
    l.grid[1] = clamp(ceilDiv(batch * rows, fp8k::kRowChunk), 65535);
  } else if (role == "scales" && s.kind == AuxKind::Quantize) {
    l.block[0] = 128;
    const int64_t n = batch * g.scaleRows(rows) * g.scaleCols(cols);
    l.grid[0] = clamp(ceilDiv(n, 128), waves);
  } else if (role == "codes") { // a CTA per square tile
    l.grid[0] = clamp(ceilDiv(cols, fp8k::kTransposeTile), INT32_MAX);
    l.grid[1] = clamp(ceilDiv(rows, fp8k::kTransposeTile), 65535);
    l.grid[2] = clamp(batch, 65535);
  } else { // transpose scales
    const int64_t n = batch * g.scaleRows(rows) * g.scaleCols(cols);
    l.grid[0] = clamp(ceilDiv(n, 256), waves);
  }
  return l;
}

} // namespace fp8
