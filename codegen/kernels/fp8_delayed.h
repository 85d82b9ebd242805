//===- fp8_delayed.h - Delayed scaling, both sides --------------*- C++ -*-===//
//
// The amax history of one tensor as the GPU stores it, and the step of
// delayed scaling over it: compiled by NVRTC into the delayed quantize
// kernels (as "fp8/fp8_delayed.h") and by g++ into the plans' CPU oracle and
// the tests (as "codegen/kernels/fp8_delayed.h"), with fp8_math.h's
// operations, so both sides keep the same bytes.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_KERNELS_FP8_DELAYED_H
#define FP8_CODEGEN_KERNELS_FP8_DELAYED_H

#if defined(__CUDACC_RTC__)
#include "fp8/fp8_math.h"
#else
#include "codegen/kernels/fp8_math.h"
#endif

namespace fp8k {

/// Header of a delayed-scaling state buffer; `length` floats follow. The
/// recorded amaxes live in a ring: the newest at (head + length - 1) %
/// length, the oldest at (head + length - count) % length.
struct AmaxHistoryState {
  u32 steps; ///< quantize calls made with this history
  u32 count; ///< amaxes recorded (at most length)
  u32 head;  ///< where the next amax is written
  /// Set by the step (delayed_scale_step): 1 when its scale is not the one
  /// predicted from the history before it (an empty history, a non-finite
  /// amax), so codes written with the prediction must be rewritten.
  u32 refit;
};

/// Bytes of the state of a history of `length` values.
FP8K_FN i64 amax_history_bytes(i64 length) {
  return i64(sizeof(AmaxHistoryState)) + 4 * length;
}

/// The amax delayed scaling takes from a non-empty history: the largest
/// recorded (algo 0) or the most recent (algo 1).
FP8K_FN float delayed_history_amax(const AmaxHistoryState *st,
                                   const float *values, int length, int algo) {
  if (algo == 1)
    return values[(st->head + u32(length) - 1) % u32(length)];
  float best = 0.0f;
  for (u32 i = 0; i < st->count; ++i) {
    const float v = values[(st->head + u32(length) - 1 - i) % u32(length)];
    best = v > best ? v : best;
  }
  return best;
}

/// delayed_scale_step with the history's amax given (`historyAmax`,
/// delayed_history_amax of the state before the step; read only when the
/// history is not empty), for a caller that reduces the history in
/// parallel.
FP8K_FN float delayed_scale_step_from(AmaxHistoryState *st, float *values,
                                      int length, int interval, int margin,
                                      float historyAmax, u32 amaxBits, int fmt,
                                      int scaleFmt, u8 *code) {
  const bool bad = amax_nonfinite(amaxBits);
  float a = bad ? infinity() : u2f(amaxBits);
  int m = 0;
  const bool predicted = !bad && st->count > 0;
  if (predicted) {
    a = historyAmax;
    m = margin;
  }
  st->refit = predicted ? 0u : 1u;
  const float scale = scale_from_amax(a, fmt, scaleFmt, m, code);
  if (st->steps % u32(interval) == 0 && !bad) {
    values[st->head] = u2f(amaxBits);
    st->head = (st->head + 1) % u32(length);
    if (st->count < u32(length))
      ++st->count;
  }
  ++st->steps;
  return scale;
}

/// The step of delayed scaling (fp8::numerics::AmaxHistory, one call of
/// quantize): picks the amax of this step (the history's prediction, or the
/// measured `amaxBits` on an empty history or a non-finite step), returns
/// its scale, records the measured amax every `interval` steps and counts
/// the step. `algo` 0 = max, 1 = most recent.
FP8K_FN float delayed_scale_step(AmaxHistoryState *st, float *values,
                                 int length, int interval, int margin, int algo,
                                 u32 amaxBits, int fmt, int scaleFmt,
                                 u8 *code) {
  const float h =
      st->count > 0 ? delayed_history_amax(st, values, length, algo) : 0.0f;
  return delayed_scale_step_from(st, values, length, interval, margin, h,
                                 amaxBits, fmt, scaleFmt, code);
}

} // namespace fp8k

#endif // FP8_CODEGEN_KERNELS_FP8_DELAYED_H
