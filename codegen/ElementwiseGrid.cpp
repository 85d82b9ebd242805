//===- ElementwiseGrid.cpp - The grids of the non-GEMM kernels -----------===//
//
// Each entry point's launch for a shape (elementwiseLaunch): the grid and
// CTA the device code of codegen/kernels/elementwise*.cuh expects for its
// path, from the rules both sides share (elementwise_params.h).
//
//===----------------------------------------------------------------------===//

#include "codegen/Elementwise.h"
#include "codegen/ElementwiseSource.h"
#include "codegen/kernels/elementwise_params.h"

#include <algorithm>
#include <cstdint>

namespace fp8 {

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

namespace {
int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// v in [1, hi], as a grid dimension.
unsigned clamp(int64_t v, int64_t hi) {
  return unsigned(std::max<int64_t>(1, std::min(v, hi)));
}

/// The per-tensor paths' launches (the block path over whole x whole
/// blocks): `elements` of each of `batch` matrices; `strided`, the most
/// CTAs of a grid-striding path (elementwiseLaunch).
AuxLaunch perTensorLaunch(const ElementwiseSpec &s, const std::string &role,
                          int64_t batch, int64_t elements, int smCount,
                          bool aligned, int64_t strided) {
  AuxLaunch l;
  l.block[0] = 256;
  // Flat, eight elements a thread. Pass 1 is one wave
  // (kTensorPassCtasPerSm). The codes pass is one wave of eight CTAs of 256
  // an SM (its 2048 threads) striding: current scaling's CTAs each take the
  // amax with an atomic on one pair (with a CTA per 2048 elements, 4096
  // such atomics on 2048x4096 took it from 0.0180 to 0.0199-0.0201 ms,
  // H200, run2 of docs/results/h200-2026-12-04-scales-in-codes-pass/), and
  // delayed scaling's runs only where pass 1 guessed the scale wrong (an
  // empty history, a non-finite amax), returning at once otherwise. One
  // matrix of current scaling: one kernel instead, at most a CTA an SM, one
  // per kTensorResidentThreads chunks of 8 (quantize_resident_tensor_body).
  const bool delayed = s.quant.mode == ScalingMode::Delayed;
  const int64_t sms = std::max(1, smCount);
  const bool resident = quantizeHasResidentPath(s) &&
                        fp8k::tensor_resident_path(batch, elements, aligned);
  if (role == "resident") {
    l.block[0] = fp8k::kTensorResidentThreads;
    l.grid[0] =
        resident
            ? clamp(ceilDiv(ceilDiv(elements, 8), fp8k::kTensorResidentThreads),
                    sms)
            : 0;
    return l;
  }
  if (resident) {
    l.grid[0] = 0;
    return l;
  }
  const int64_t most = role == "amax"
                           ? sms * (delayed ? fp8k::kTensorDelayedPassCtasPerSm
                                            : fp8k::kTensorPassCtasPerSm)
                           : sms * 8;
  l.grid[0] =
      clamp(ceilDiv(ceilDiv(elements, 8), 256), std::min(strided, most));
  return l;
}
} // namespace

AuxLaunch elementwiseLaunch(const ElementwiseSpec &s, size_t entry,
                            int64_t batch, int64_t rows, int64_t cols,
                            int smCount, bool aligned) {
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
    l = perTensorLaunch(s, role, batch, rows * cols, smCount, aligned, strided);
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
