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
  const std::string h = nameHash8(toJSON(*this));
  switch (kind) {
  case AuxKind::Elementwise:
    return "fp8_ew_" + std::string(toString(out)) + "_" + h;
  case AuxKind::Quantize:
    return "fp8_quant_" + std::string(tagOf(quant.format)) + "_" +
           granularityTag(quant.granularity) + (transposed ? "_tr" : "") +
           (quant.mode == ScalingMode::Delayed ? "_delayed" : "") +
           (program.instrs.empty() ? "" : "_fused") +
           (rowSum ? "_rowsum" : "") + (amaxIn ? "_amaxin" : "") + "_" + h;
  case AuxKind::Transpose:
    return "fp8_transpose_" + std::string(tagOf(quant.format)) + "_" +
           granularityTag(quant.granularity) + "_" + h;
  case AuxKind::Permute:
    return "fp8_moe_permute_" + std::string(tagOf(quant.format)) + "_" +
           granularityTag(quant.granularity) + "_" + h;
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
  if (s.amaxIn) {
    const Granularity &g = s.quant.granularity;
    if (s.kind != AuxKind::Quantize || !takesGivenAmax(s.quant) || s.rowSum ||
        s.transposed)
      return errorf("expected a quantize with a given amax to take "
                    "per-tensor blocks with current scaling, found a ",
                    toString(s.kind), " of ", toString(g),
                    s.quant.mode == ScalingMode::Delayed ? " delayed" : "",
                    s.rowSum ? " with a row sum" : "",
                    s.transposed ? " transposed" : "");
  }
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

bool rowPathTableCtas(const ElementwiseSpec &s, bool table) {
  return table && s.arch == Arch::SM90a && quantizeUsesRowPath(s) &&
         !s.rowSum && s.quant.granularity.cols != Granularity::kWhole;
}

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

bool quantizeReadsAmax(const ElementwiseSpec &s) {
  return s.kind == AuxKind::Quantize && s.amaxIn;
}

bool quantizeIsOnePass(const ElementwiseSpec &s) {
  return quantizeUsesRowPath(s) || quantizeUsesColumnPath(s) ||
         quantizeUsesTilePath(s) || quantizeReadsAmax(s);
}

/// The block path over per-tensor blocks (a scale per matrix): two
/// kernels, one of which makes the scale.
static bool perTensorBlockPath(const ElementwiseSpec &s) {
  const Granularity &g = s.quant.granularity;
  return s.kind == AuxKind::Quantize && g.rows == Granularity::kWhole &&
         g.cols == Granularity::kWhole && !quantizeIsOnePass(s);
}

bool quantizeScalesInAmaxPass(const ElementwiseSpec &s) {
  return perTensorBlockPath(s) && s.quant.mode == ScalingMode::Delayed;
}

bool quantizeScalesInCodesPass(const ElementwiseSpec &s) {
  return perTensorBlockPath(s) && s.quant.mode == ScalingMode::Current;
}

bool quantizeHasResidentPath(const ElementwiseSpec &s) {
  return quantizeScalesInCodesPass(s) && tabulatedValue(s) < 0;
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
    if (quantizeHasResidentPath(s))
      return {"amax", "quantize", "resident"};
    if (perTensorBlockPath(s))
      return {"amax", "quantize"};
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
       << "  static constexpr bool kAmaxIn = " << (s.amaxIn ? "true" : "false")
       << ";\n"
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
    } else if (quantizeReadsAmax(s)) {
      entry(0, "256",
            "fp8k::quantize_tensor_given_amax_body<fp8k::Prog, fp8k::Q>(p);");
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
      // (sm_100a's ptxas spills delayed scaling's amax pass, the scale's
      // tail included, unless told that two CTAs an SM suffice)
      const size_t codes = perTensorBlockPath(s) ? 1 : 2;
      entry(0, quantizeScalesInAmaxPass(s) ? onePass : "256",
            "fp8k::quantize_amax_body<fp8k::Prog, fp8k::Q>(p);");
      if (codes == 2)
        entry(1, "128", "fp8k::quantize_scales_body<fp8k::Q>(p);");
      entry(codes, "256", "fp8k::quantize_apply_body<fp8k::Prog, fp8k::Q>(p);");
      // (one CTA an SM: told so, ptxas gives it 64 registers a thread, not
      // the 32 of two CTAs, with which it spilled)
      if (quantizeHasResidentPath(s))
        entry(codes + 1, std::to_string(fp8k::kTensorResidentThreads) + ", 1",
              "fp8k::quantize_resident_tensor_body<fp8k::Prog, fp8k::Q>(p);");
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
    if (roles[i] == "resident") {
      g.launch.threads = fp8k::kTensorResidentThreads;
      g.launch.sharedBytes = fp8k::kTensorResidentBytes;
      g.launch.gridSync = true;
    }
    out.push_back(std::move(g));
  }
  return out;
}

} // namespace fp8
