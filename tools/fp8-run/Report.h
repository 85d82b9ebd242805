//===- Report.h - fp8-run's verification and benchmark report ---*- C++ -*-===//
//
// What fp8-run prints and writes as JSON about a verification (every step
// and output against the CPU oracle, the quantization error against the
// unquantized graph) and a benchmark (--bench).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TOOLS_FP8RUN_REPORT_H
#define FP8_TOOLS_FP8RUN_REPORT_H

#include "core/Target.h"
#include "runtime/plan/PlanBench.h"
#include "runtime/plan/PlanExecutor.h"
#include "runtime/plan/PlanVerify.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fp8 {

/// Prints the outputs against the plan on the CPU oracle.
void printVsOracle(const std::vector<OutputCheck> &checks);

/// Prints the outputs' quantization error (against the unquantized graph).
void printQuantizationError(const std::vector<OutputCheck> &checks);

/// The output checks as JSON.
nlohmann::ordered_json outputsJson(const std::vector<OutputCheck> &checks);

/// Prints every step's check; returns them as JSON.
nlohmann::ordered_json reportStepChecks(const std::vector<StepCheck> &steps);

/// Records the verdict in `v`, prints its line and returns whether it
/// passed.
bool reportVerdict(const VerifyVerdict &verdict, nlohmann::ordered_json &v,
                   const std::string &suffix);

/// Notes the GEMM steps that launch the tile compiled into the plan where
/// the runtime's heuristic picks another for this run's M (a plan compiled
/// for another M: --fp8-compile's m-hint), each with both tiles.
void printCompiledTileNotes(const std::vector<CompiledPlanKernel> &kernels);

/// Prints the benchmark's table (the memory-bound steps' rates against
/// `roof`, the device's DRAM bandwidth: core/Target.h); returns it as JSON.
nlohmann::ordered_json reportBench(const BenchReport &b,
                                   const DramRoofline &roof);

} // namespace fp8

#endif // FP8_TOOLS_FP8RUN_REPORT_H
