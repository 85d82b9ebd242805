//===- ElementwiseSource.cpp - Programs as CUDA source --------------------===//
//
// The text a program becomes in a generated translation unit: the Prog of
// the quantize, elementwise and reduce kernels (elementwise.cuh) and the
// Epi and EpiProg of a GEMM's quantizing epilogue (gemm_quantize.cuh).
//
//===----------------------------------------------------------------------===//

#include "codegen/ElementwiseSource.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <vector>

namespace fp8 {

const char *typeConst(DType t) {
  switch (t) {
  case DType::E4M3FN:
    return "kE4M3";
  case DType::E5M2:
    return "kE5M2";
  case DType::BF16:
    return "kBF16";
  case DType::F16:
    return "kF16";
  case DType::F32:
    return "kF32";
  case DType::UE8M0:
    return "kUE8M0";
  case DType::I32:
    break;
  }
  return "kF32";
}

const char *scaleConst(ScaleFormat f) {
  switch (f) {
  case ScaleFormat::F32:
    return "kScaleF32";
  case ScaleFormat::F32Pow2:
    return "kScaleF32Pow2";
  case ScaleFormat::UE8M0:
    return "kScaleUE8M0";
  }
  return "kScaleF32";
}

namespace {
/// A float as an exact C++ expression.
std::string floatLiteral(float v) {
  if (!std::isfinite(v)) {
    uint32_t u;
    std::memcpy(&u, &v, sizeof(u));
    char buf[32];
    std::snprintf(buf, sizeof(buf), "fp8k::u2f(0x%08Xu)", u);
    return buf;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%af", static_cast<double>(v));
  return buf;
}

/// A program operand over in0, in1, ... and v0, v1, ...
std::string argText(const EwArg &a) {
  switch (a.kind) {
  case EwArg::Kind::Input:
    return "in" + std::to_string(a.index);
  case EwArg::Kind::Value:
    return "v" + std::to_string(a.index);
  case EwArg::Kind::Constant:
    return floatLiteral(a.value);
  }
  return "0.0f";
}

/// The instructions `p` evaluates for instruction `last` (all of them when
/// the result needs them, `last` the result's) when instruction `table`
/// (>= 0) is looked up rather than computed.
std::vector<bool> neededInstructions(const EwProgram &p, int last, int table) {
  std::vector<bool> need(p.instrs.size(), false);
  if (last < 0)
    return need;
  need[size_t(last)] = true;
  for (size_t i = size_t(last) + 1; i-- > 0;)
    if (need[i] && int(i) != table)
      for (const EwArg &a : p.instrs[i].args)
        if (a.kind == EwArg::Kind::Value)
          need[size_t(a.index)] = true;
  return need;
}

/// The program's instructions over the floats in0, in1, ..., one line each
/// (`const float v<i> = ...;`), indented by `indent`: those the result
/// needs, with instruction `table` (>= 0, tabulatedValue) looked up in
/// Prog::Tab (in a loop over k, array `tv` holds the looked-up values:
/// emitTableLookups); or, with `upTo` >= 0, those instruction `upTo` needs.
void emitInstructions(std::ostringstream &os, const EwProgram &p,
                      const std::string &indent, int table = -1, int upTo = -1,
                      bool inLoop = false) {
  const int last = upTo >= 0                             ? upTo
                   : p.result.kind == EwArg::Kind::Value ? p.result.index
                                                         : -1;
  const std::vector<bool> keep = table >= 0 || upTo >= 0
                                     ? neededInstructions(p, last, table)
                                     : std::vector<bool>{};
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    if (!keep.empty() && !keep[i])
      continue;
    if (int(i) == table) {
      os << indent << "const float v" << i << " = ";
      if (inLoop)
        os << "tv[k];\n";
      else
        os << "table_lookup<Tab>(in" << tabulatedInput(p, table) << ");\n";
      continue;
    }
    const EwInstr &in = p.instrs[i];
    std::string call;
    if (in.op == EwOp::Convert) {
      call = argText(in.args[0]);
    } else {
      call = std::string(toString(in.op)) + "(";
      for (size_t j = 0; j < in.args.size(); ++j)
        call += (j ? ", " : "") + argText(in.args[j]);
      call += ")";
    }
    os << indent << "const float v" << i << " = ";
    if (in.type == DType::F32)
      os << call;
    else
      os << "round_to(" << call << ", " << typeConst(in.type) << ")";
    os << ";\n";
  }
}

/// Before a loop over the N elements whose inputs are in arrays a0, a1,
/// ...: their values of instruction `table` (>= 0) looked up into `tv`.
void emitTableLookups(std::ostringstream &os, const EwProgram &p, int table) {
  if (table < 0)
    return;
  os << "    float tv[N];\n"
     << "    table_lookup_n<Tab, N>(a" << tabulatedInput(p, table)
     << ", tv);\n";
}

/// One program evaluated over a Raw (emitRawPhases): the method's name, the
/// program, and the input that is the method's parameter `rs` (a row's
/// sum, ElementwiseSpec::rowSum) rather than a load, or -1.
struct RawEval {
  const char *name;
  const EwProgram *program;
  int rs;
  int table; ///< tabulatedValue, or -1
};

/// Which inputs a program reads.
std::vector<bool> usedInputs(const EwProgram &p) {
  std::vector<bool> used(p.inputs.size(), false);
  auto mark = [&](const EwArg &a) {
    if (a.kind == EwArg::Kind::Input)
      used[size_t(a.index)] = true;
  };
  for (const EwInstr &in : p.instrs)
    for (const EwArg &a : in.args)
      mark(a);
  mark(p.result);
  return used;
}

/// The vector path in two phases, for bodies that keep several vectors'
/// loads in flight before the first is needed: struct `raw` holds what the
/// loads of elements i .. i + N - 1 bring (the inputs of `p` marked
/// `loaded`), `load` issues them (the caller gives the elements' row: no
/// division here; its kLastUse marks the full-size inputs' loads as their
/// last use, load_words), and each of `evals` runs its program over them.
void emitRawPhases(std::ostringstream &os, const EwProgram &p,
                   const std::vector<bool> &loaded, const char *raw,
                   const char *load, const std::vector<RawEval> &evals) {
  os << "  template <int N> struct " << raw << " {\n";
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    if (!loaded[i])
      continue;
    if (p.broadcastOf(i) == EwBroadcast::Row)
      os << "    float r" << i << ";\n";
    else
      os << "    u32 w" << i << "[VecWords<" << typeConst(p.inputs[i])
         << ", N>::kCount];\n";
  }
  os << "  };\n\n"
     << "  template <int N, bool kLastUse = false>\n"
     << "  static __device__ __forceinline__ void " << load
     << "(const EwParams &p, "
        "i64 i, i64 row, "
     << raw << "<N> &r) {\n";
  os << "    (void)row;\n";
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    if (!loaded[i])
      continue;
    const std::string t = typeConst(p.inputs[i]);
    const std::string in = "p.in[" + std::to_string(i) + "]";
    switch (p.broadcastOf(i)) {
    case EwBroadcast::None:
      os << "    load_words<" << t << ", N, kLastUse>(" << in << ", i, r.w" << i
         << ");\n";
      break;
    case EwBroadcast::Col:
      os << "    load_words<" << t << ", N>(" << in << ", i - row * p.cols, r.w"
         << i << ");\n";
      break;
    case EwBroadcast::Row:
      os << "    r.r" << i << " = load_elem<" << t << ">(" << in << ", row);\n";
      break;
    }
  }
  os << "  }\n\n";
  for (const RawEval &e : evals) {
    const EwProgram &q = *e.program;
    const std::vector<bool> used = usedInputs(q);
    os << "  template <int N>\n"
       << "  static __device__ __forceinline__ void " << e.name << "(const "
       << raw << "<N> &r, " << (e.rs >= 0 ? "float rs, " : "")
       << "float out[N]) {\n";
    for (size_t i = 0; i < q.inputs.size(); ++i) {
      if (!used[i] || int(i) == e.rs || q.broadcastOf(i) == EwBroadcast::Row)
        continue;
      os << "    float a" << i << "[N];\n"
         << "    unpack_words<" << typeConst(q.inputs[i]) << ", N>(r.w" << i
         << ", a" << i << ");\n";
    }
    emitTableLookups(os, q, e.table);
    os << "#pragma unroll\n"
       << "    for (int k = 0; k < N; ++k) {\n";
    for (size_t i = 0; i < q.inputs.size(); ++i) {
      if (!used[i])
        continue;
      if (int(i) == e.rs)
        os << "      const float in" << i << " = rs;\n";
      else if (q.broadcastOf(i) == EwBroadcast::Row)
        os << "      const float in" << i << " = r.r" << i << ";\n";
      else
        os << "      const float in" << i << " = a" << i << "[k];\n";
    }
    emitInstructions(os, q, "      ", e.table, -1, true);
    os << "      out[k] = " << argText(q.result) << ";\n    }\n  }\n\n";
  }
}

/// Where input i's element of grid element `e` lies (EwBroadcast).
std::string inputIndex(const EwProgram &p, size_t i, const std::string &e) {
  switch (p.broadcastOf(i)) {
  case EwBroadcast::Row:
    return "row_of(" + e + ", p.cols)";
  case EwBroadcast::Col:
    return "(" + e + ") - row_of(" + e + ", p.cols) * p.cols";
  case EwBroadcast::None:
    break;
  }
  return e;
}

/// eval_n and its kin, `name`: elements i .. i + n - 1 (n <= N) into out[0
/// .. n), zeros past them; `vec` (n == N, the inputs aligned, and with a
/// broadcast input the N elements in one row): 16-byte loads, else element
/// by element. One copy of the instructions serves both. A row-broadcast
/// input is one load on the vector path; input `rs` (>= 0) is the
/// parameter `rs`, not a load, and then the caller passes element i's row.
void emitEvalN(std::ostringstream &os, const EwProgram &p, const char *name,
               int rs, int table) {
  std::vector<bool> used = usedInputs(p);
  os << "  template <int N>\n"
     << "  static __device__ __forceinline__ void " << name
     << "(const EwParams &p, "
        "i64 i, int n, bool vec, "
     << (rs >= 0 ? "i64 row, float rs, " : "") << "float out[N]) {\n";
  // The row and column of element i, for the vectors, where a loaded input
  // broadcasts; the row-sum quantize's caller knows the row (a division
  // less a chunk).
  bool byRow = false, byCol = false;
  for (size_t i = 0; i < p.inputs.size(); ++i)
    if (used[i] && int(i) != rs) {
      byRow = byRow || p.broadcastOf(i) == EwBroadcast::Row;
      byCol = byCol || p.broadcastOf(i) == EwBroadcast::Col;
    }
  if ((byRow || byCol) && rs < 0)
    os << "    const i64 row = vec ? row_of(i, p.cols) : 0;\n";
  if (byCol)
    os << "    const i64 col = i - row * p.cols;\n";
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    if (!used[i] || int(i) == rs)
      continue;
    const std::string t = typeConst(p.inputs[i]);
    const std::string in = "p.in[" + std::to_string(i) + "]";
    const std::string a = "a" + std::to_string(i);
    os << "    float " << a << "[N];\n";
    switch (p.broadcastOf(i)) {
    case EwBroadcast::None:
      os << "    if (vec)\n"
         << "      load_vec<" << t << ", N>(" << in << ", i, " << a << ");\n"
         << "    else\n"
         << "      load_some<" << t << ", N>(" << in << ", i, n, " << a
         << ");\n";
      break;
    case EwBroadcast::Col:
    case EwBroadcast::Row:
      // Vectors: a column input's 16 bytes, or a row input's one value;
      // else element by element.
      os << "    if (vec) {\n";
      if (p.broadcastOf(i) == EwBroadcast::Col)
        os << "      load_vec<" << t << ", N>(" << in << ", col, " << a
           << ");\n";
      else
        os << "      const float r = load_elem<" << t << ">(" << in
           << ", row);\n"
           << "#pragma unroll\n"
           << "      for (int k = 0; k < N; ++k)\n"
           << "        " << a << "[k] = r;\n";
      os << "    } else {\n"
         << "#pragma unroll\n"
         << "      for (int k = 0; k < N; ++k)\n"
         << "        " << a << "[k] = k < n ? load_elem<" << t << ">(" << in
         << ", " << inputIndex(p, i, "i + k") << ") : 0.0f;\n"
         << "    }\n";
      break;
    }
  }
  emitTableLookups(os, p, table);
  os << "#pragma unroll\n"
     << "    for (int k = 0; k < N; ++k) {\n";
  for (size_t i = 0; i < p.inputs.size(); ++i)
    if (used[i])
      os << "      const float in" << i << " = "
         << (int(i) == rs ? std::string("rs") : "a" + std::to_string(i) + "[k]")
         << ";\n";
  emitInstructions(os, p, "      ", table, -1, true);
  os << "      out[k] = k < n ? " << argText(p.result)
     << " : 0.0f;\n    }\n  }\n\n";
}

} // namespace

bool isConvertOnly(const EwProgram &p) {
  for (const EwInstr &in : p.instrs)
    if (in.op != EwOp::Convert)
      return false;
  return true;
}

/// Prog::Tab (elementwise_table.cuh): instruction `table` of `p`
/// computed from its one input, and Prog::prepare, which fills the table.
void emitTable(std::ostringstream &os, const EwProgram &p, int table) {
  os << "  struct Tab {\n"
     << "    static __device__ __forceinline__ float f(float in"
     << tabulatedInput(p, table) << ") {\n";
  emitInstructions(os, p, "      ", -1, table);
  os << "      return v" << table << ";\n    }\n  };\n\n"
     << "  static __device__ __forceinline__ void prepare(const EwParams &p) "
        "{\n"
     << "    table_fill<Tab>(table_wanted(p));\n"
     << "    __syncthreads();\n  }\n\n";
}

void emitProgram(std::ostringstream &os, const EwProgram &p,
                 const EwProgram *rowSum, int table) {
  const std::vector<bool> used = usedInputs(p);
  os << "struct Prog {\n"
     << "  static constexpr bool kConvertOnly = "
     << (isConvertOnly(p) ? "true" : "false") << ";\n"
     << "  static constexpr bool kLookUp = " << (table >= 0 ? "true" : "false")
     << ";\n\n";
  if (table >= 0)
    emitTable(os, p, table);
  os << "  static __device__ __forceinline__ float eval(const EwParams &p, "
        "i64 i) {\n";
  for (size_t i = 0; i < p.inputs.size(); ++i)
    if (used[i])
      os << "    const float in" << i << " = load_elem<"
         << typeConst(p.inputs[i]) << ">(p.in[" << i << "], "
         << inputIndex(p, i, "i") << ");\n";
  emitInstructions(os, p, "    ", table);
  os << "    return " << argText(p.result) << ";\n  }\n\n";

  emitEvalN(os, p, "eval_n", -1, table);
  os << "  template <int N>\n"
     << "  static __device__ __forceinline__ void eval_vec(const EwParams &p, "
        "i64 i, float out[N]) {\n"
     << "    eval_n<N>(p, i, N, true, out);\n  }\n\n";

  emitRawPhases(os, p, used, "Raw", "load_raw", {{"eval_raw", &p, -1, table}});

  if (rowSum) {
    // The quantize that sums its rows (quantize_rows_sum_body): the sum's
    // program and the quantized one over one set of loads, the last input
    // the sum.
    const int rs = int(p.inputs.size()) - 1;
    emitEvalN(os, p, "eval_n_rs", rs, table);
    emitEvalN(os, *rowSum, "sum_n", -1, -1);
    std::vector<bool> loaded = used;
    loaded[size_t(rs)] = false;
    const std::vector<bool> summed = usedInputs(*rowSum);
    for (size_t i = 0; i < summed.size(); ++i)
      loaded[i] = loaded[i] || summed[i];
    emitRawPhases(
        os, p, loaded, "RawS", "load_raw_s",
        {{"eval_raw_rs", &p, rs, table}, {"sum_raw", rowSum, -1, -1}});
  }

  os << "  static __device__ __forceinline__ bool aligned(const EwParams &p, "
        "u64 bytes) {\n"
     << "    return true";
  if (p.broadcasts()) // vectors of up to 8 elements stay in one row
    os << " && p.cols % 8 == 0";
  const std::vector<bool> vectors = vectorInputs(p, rowSum);
  for (size_t i = 0; i < vectors.size(); ++i)
    if (vectors[i])
      os << " && is_aligned(p.in[" << i << "], bytes)";
  os << ";\n  }\n};\n\n";
}

std::vector<bool> vectorInputs(const EwProgram &p, const EwProgram *rowSum) {
  std::vector<bool> out = usedInputs(p);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = out[i] && p.broadcastOf(i) != EwBroadcast::Row;
  if (rowSum) { // the sum's inputs are among the quantize's
    const std::vector<bool> summed = usedInputs(*rowSum);
    for (size_t i = 0; i < summed.size() && i < out.size(); ++i)
      out[i] =
          out[i] || (summed[i] && rowSum->broadcastOf(i) != EwBroadcast::Row);
  }
  return out;
}

std::vector<bool> vectorInputs(const ElementwiseSpec &s) {
  return vectorInputs(s.program, s.rowSum ? &*s.rowSum : nullptr);
}

std::string emitEpilogueSource(const GemmEpilogue &e, DType gemmOut,
                               int blockN) {
  std::ostringstream os;
  os << "struct Epi {\n"
     << "  static constexpr int kBlockN = " << blockN << ";\n"
     << "  static constexpr int kPairBlock = " << e.pairBlock
     << "; // 0: one input\n"
     << "  static constexpr int kGroupCols = " << e.granularity.cols
     << "; // 0: whole rows\n"
     << "  static constexpr int kRoundTo = " << typeConst(gemmOut) << ";\n"
     << "  static constexpr int kFormat = " << typeConst(e.format) << ";\n"
     << "  static constexpr int kScaleFmt = " << scaleConst(e.granularity.scale)
     << ";\n"
     << "};\n\n"
     << "struct EpiProg {\n"
     << "  static __device__ __forceinline__ float apply(";
  for (size_t i = 0; i < e.program.inputs.size(); ++i)
    os << (i ? ", " : "") << "float in" << i;
  os << ") {\n";
  emitInstructions(os, e.program, "    ");
  os << "    return " << argText(e.program.result) << ";\n  }\n};\n";
  return os.str();
}

} // namespace fp8
