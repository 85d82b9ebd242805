//===- PlanMoe.h - A plan's MoE steps on the CPU ----------------*- C++ -*-===//
//
// The oracle's side of the MoE routing steps (runtime/plan/Plan.h): the
// permute (routing by numerics::moePermute, gather, row-block quantize),
// the weighted unpermute with the kernel's own arithmetic, the reference
// graph's permute, grouped matmul and unpermute (their routing recomputed
// from the ids), and random routing inputs. PlanOracle.cpp calls these.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_PLANMOE_H
#define FP8_RUNTIME_PLANMOE_H

#include "numerics/GroupedGemm.h"
#include "runtime/plan/PlanOracle.h"

#include <functional>

namespace fp8 {

/// The elements of an int32 tensor.
std::vector<int32_t> intsOf(const HostTensor &t);
/// The routing of ids [T, topK] over `experts`, groups padded to `align`.
Expected<numerics::MoePermutation> routeOf(const HostTensor &ids,
                                           int64_t experts, int64_t align);
/// The MoE step that reads buffer `name` as its routing ids (kind permute)
/// or weights (kind unpermute), or nullptr.
const PlanStep *routingReader(const Plan &plan, const std::string &name,
                              StepKind kind);
/// The grouped GEMM step that reads input `name` as its group tensor: the
/// valid rows of a masked one or the offsets of one along K (the forms
/// whose group tensor is a graph input), or nullptr.
const PlanStep *groupInputReader(const Plan &plan, const std::string &name);
/// Random routing for int32 input `b`: a permute step's ids (each token's
/// topK experts distinct, uniform over E), a masked GEMM's valid rows
/// (uniform in [0, maxM]; `buffers` gives maxM) or offsets along K
/// (multiples of 128 from 0 to K rounded down to 128, each group's share
/// drawn in [0, 2 K / G] blocks, empty groups included).
Status randomRoutingIds(const Plan &plan, const HostBuffers &buffers,
                        const PlanBuffer &b, HostTensor &t, uint64_t seed);

/// Checks the routing ids every permute step reads: each in [0, E), no
/// token sent to one expert twice (the error names the token and the id);
/// the valid rows of masked grouped GEMMs, in [0, maxM]; and the offsets of
/// grouped GEMMs along K (fp8::checkGroupValues).
/// fillInputs runs it; the kernels drop a slot with an id outside [0, E)
/// rather than fault, but the oracle refuses it.
Status checkRoutingIds(const Plan &plan, const HostBuffers &buffers);

/// A permute or unpermute step on the CPU, bit for bit the kernels'.
Status runPermuteOnCpu(const PlanStep &s,
                       const std::vector<const HostTensor *> &in,
                       const std::vector<HostTensor *> &out);
Status runUnpermuteOnCpu(const PlanStep &s,
                         const std::vector<const HostTensor *> &in,
                         const std::vector<HostTensor *> &out);

/// A reference value by name.
using RefValue = std::function<const HostTensor &(const std::string &)>;
/// An MoE op of the reference graph (RefOp::Kind::Permute, GroupedMatmul,
/// Unpermute) into `out`.
Status runMoeReference(const RefOp &op, const RefValue &value, HostTensor &out);

} // namespace fp8

#endif // FP8_RUNTIME_PLANMOE_H
