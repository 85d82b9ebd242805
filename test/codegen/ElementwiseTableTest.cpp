//===- ElementwiseTableTest.cpp - Which value a kernel looks up -----------===//
//
// codegen/ElementwiseTable.cpp picks a program's value computed from one
// bf16 input alone through a transcendental; the generated kernels look it
// up (elementwise_table.cuh). Here: the values picked and refused, the
// source that uses them, and the grids of the kernels that fill tables.
//
//===----------------------------------------------------------------------===//

#include "codegen/Elementwise.h"
#include "codegen/ElementwiseSource.h"
#include "codegen/kernels/elementwise_params.h"

#include <gtest/gtest.h>

using namespace fp8;

namespace {
using A = EwArg;

/// exp(in0) * in1 with in0 of type `t`: the exp is a one-input value.
EwProgram expTimes(DType t) {
  EwProgram p;
  p.inputs = {t, DType::BF16};
  p.instrs = {{EwOp::Exp, {A::input(0)}, DType::F32},
              {EwOp::Mul, {A::result(0), A::input(1)}, DType::BF16}};
  p.result = A::result(1);
  return p;
}

ElementwiseSpec quantizeOf(const EwProgram &p, Granularity g) {
  ElementwiseSpec s;
  s.kind = AuxKind::Quantize;
  s.program = p;
  s.quant.granularity = g;
  return s;
}
} // namespace

TEST(ElementwiseTable, PicksTheOneInputTranscendentalValue) {
  // SwiGLU: in0 / (1 + exp(-in0)) (instruction 5) is read by the multiply
  // with in1; the exp (3) and the sum (4) feed only it.
  EXPECT_EQ(tabulatedValue(swigluProgram()), 5);
  EXPECT_EQ(tabulatedInput(swigluProgram(), 5), 0);
  EXPECT_EQ(tabulatedValue(expTimes(DType::BF16)), 0);
  // A program of one input: its result.
  EwProgram silu;
  silu.inputs = {DType::BF16};
  silu.instrs = {{EwOp::Neg, {A::input(0)}, DType::F32},
                 {EwOp::Exp, {A::result(0)}, DType::F32},
                 {EwOp::Add, {A::result(1), A::constant(1.0f)}, DType::F32},
                 {EwOp::Div, {A::input(0), A::result(2)}, DType::BF16}};
  silu.result = A::result(3);
  EXPECT_EQ(tabulatedValue(silu), 3);
  // The key is the second input.
  EwProgram second = expTimes(DType::BF16);
  second.instrs[0].args[0] = A::input(1);
  second.instrs[1].args[1] = A::input(0);
  EXPECT_EQ(tabulatedValue(second), 0);
  EXPECT_EQ(tabulatedInput(second, 0), 1);
}

TEST(ElementwiseTable, RefusesWhatATableCannotHold) {
  // Keys of 2^16 bf16 values only: not f16 (1024 significands a binade),
  // not f32.
  EXPECT_EQ(tabulatedValue(expTimes(DType::F16)), -1);
  EXPECT_EQ(tabulatedValue(expTimes(DType::F32)), -1);
  // Two inputs before the transcendental.
  EwProgram mixed = expTimes(DType::BF16);
  mixed.instrs = {{EwOp::Mul, {A::input(0), A::input(1)}, DType::F32},
                  {EwOp::Exp, {A::result(0)}, DType::F32}};
  mixed.result = A::result(1);
  EXPECT_EQ(tabulatedValue(mixed), -1);
  // No transcendental: a division is cheaper than the lookup would save.
  EwProgram div = expTimes(DType::BF16);
  div.instrs[0] = {EwOp::Div, {A::constant(1.0f), A::input(0)}, DType::F32};
  EXPECT_EQ(tabulatedValue(div), -1);
  // A broadcast key (a value per row or column, not per element).
  EwProgram col = expTimes(DType::BF16);
  col.broadcast = {EwBroadcast::Col, EwBroadcast::None};
  EXPECT_EQ(tabulatedValue(col), -1);
  // A parameter (the row sum of a row-sum quantize).
  EXPECT_EQ(tabulatedValue(expTimes(DType::BF16), 0), -1);
  // RMSNorm: the rsqrt depends on the row sum.
  ElementwiseSpec norm = quantizeOf(rmsnormProgram(1.0f / 4096, 1e-5f),
                                    Granularity::block(1, 128));
  norm.rowSum = sumOfSquaresProgram();
  EXPECT_EQ(tabulatedValue(norm), -1);
  // A plain quantize.
  EXPECT_EQ(tabulatedValue(quantizeOf(EwProgram::identity(DType::BF16),
                                      Granularity::block(1, 128))),
            -1);
}

TEST(ElementwiseTable, KernelsLookUpAndFillFirst) {
  const ElementwiseSpec s =
      quantizeOf(swigluProgram(), Granularity::block(1, 128));
  auto k = emitElementwise(s);
  ASSERT_TRUE(k.isOk()) << k.message();
  const std::string &src = (*k)[0].source;
  EXPECT_NE(src.find("struct Tab {"), std::string::npos) << src;
  EXPECT_NE(src.find("table_lookup_n<Tab, N>(a0, tv);"), std::string::npos);
  EXPECT_NE(src.find("const float v5 = tv[k];"), std::string::npos);
  EXPECT_NE(src.find("const float v5 = table_lookup<Tab>(in0);"),
            std::string::npos);
  // The exp is computed in Tab::f only.
  EXPECT_EQ(src.find("exp(v2)"), src.rfind("exp(v2)"));
  EXPECT_NE(src.find("fp8k::Prog::prepare(p);\n  fp8k::after_prior_grid();\n  "
                     "fp8k::quantize_rows_body<fp8k::Prog, fp8k::Q>(p);"),
            std::string::npos)
      << src;
  // Without a table: no Tab, no prepare.
  auto plain = emitElementwise(
      quantizeOf(EwProgram::identity(DType::BF16), Granularity::block(1, 128)));
  ASSERT_TRUE(plain.isOk());
  EXPECT_EQ((*plain)[0].source.find("prepare"), std::string::npos);
  EXPECT_EQ((*plain)[0].source.find("Tab"), std::string::npos);
  // Per-tensor: the amax and codes kernels fill the table (there is no
  // scales kernel: the codes pass makes the scale).
  auto tensor =
      emitElementwise(quantizeOf(swigluProgram(), Granularity::perTensor()));
  ASSERT_TRUE(tensor.isOk());
  ASSERT_EQ(tensor->size(), 2u);
  const std::string &ts = (*tensor)[0].source;
  EXPECT_NE(ts.find("prepare(p);\n  fp8k::after_prior_grid();\n  "
                    "fp8k::quantize_amax_body"),
            std::string::npos)
      << ts;
  EXPECT_NE(ts.find("prepare(p);\n  fp8k::after_prior_grid();\n  "
                    "fp8k::quantize_apply_body"),
            std::string::npos);
  // The column path (R x 1 blocks) strides over block rows: it fills the
  // table before its body.
  auto cols =
      emitElementwise(quantizeOf(swigluProgram(), Granularity::block(128, 1)));
  ASSERT_TRUE(cols.isOk()) << cols.message();
  EXPECT_NE((*cols)[0].source.find(
                "fp8k::Prog::prepare(p);\n  fp8k::after_prior_grid();\n  "
                "fp8k::quantize_cols_body<fp8k::Prog, fp8k::Q>(p);"),
            std::string::npos)
      << (*cols)[0].source;
  // Kernels whose CTAs do not stride (a CTA per block or per row) have no
  // table: they would fill it for few elements a thread.
  for (const ElementwiseSpec &s :
       {quantizeOf(swigluProgram(), Granularity::block(37, 5)),
        quantizeOf(swigluProgram(), Granularity::block(128, 128))}) {
    SCOPED_TRACE(s.kernelName());
    EXPECT_EQ(tabulatedValue(s), -1);
    auto k = emitElementwise(s);
    ASSERT_TRUE(k.isOk());
    EXPECT_EQ((*k)[0].source.find("Tab"), std::string::npos);
  }
}

TEST(ElementwiseTable, TheColumnPathStridesOverTasksWithATable) {
  // 128x1 SwiGLU: one wave of kColKeptCtasPerSm CTAs an SM striding over
  // the tasks (a column group of 64 columns in a block row), whatever the
  // column groups; without a table, a CTA per task.
  const ElementwiseSpec swiglu =
      quantizeOf(swigluProgram(), Granularity::block(128, 1));
  const ElementwiseSpec plain =
      quantizeOf(EwProgram::identity(DType::BF16), Granularity::block(128, 1));
  ASSERT_GE(tabulatedValue(swiglu), 0);
  const unsigned wave = 132u * fp8k::kColKeptCtasPerSm;
  const AuxLaunch t = elementwiseLaunch(swiglu, 0, 1, 4096, 4096, 132);
  EXPECT_EQ(t.grid[0], wave);
  EXPECT_EQ(t.grid[1], 1u);
  EXPECT_TRUE(fp8k::table_pays(4096 * 4096, t.grid[0]));
  const AuxLaunch p = elementwiseLaunch(plain, 0, 1, 4096, 4096, 132);
  EXPECT_EQ(p.grid[0], 4096u / 64);
  EXPECT_EQ(p.grid[1], 4096u / 128);
  // 172 column groups (a stride over block rows gave them a CTA each on
  // the wave's 264) and 1024: the same wave.
  for (int64_t cols : {11008, 65536}) {
    const AuxLaunch w = elementwiseLaunch(swiglu, 0, 1, 4096, cols, 132);
    EXPECT_EQ(w.grid[0], wave) << cols;
    EXPECT_EQ(w.grid[1], 1u) << cols;
  }
  // Fewer tasks than the wave: a CTA each (8 groups x 2 block rows x 3).
  const AuxLaunch few = elementwiseLaunch(swiglu, 0, 3, 256, 512, 132);
  EXPECT_EQ(few.grid[0], 48u);
  EXPECT_EQ(few.grid[1], 1u);
  // Blocks taller than 256 rows (a thread a column) stride over block rows.
  const ElementwiseSpec tall =
      quantizeOf(swigluProgram(), Granularity::block(300, 1));
  const AuxLaunch tl = elementwiseLaunch(tall, 0, 1, 8192, 4096, 132);
  EXPECT_EQ(tl.grid[0], 4096u / fp8k::kColsPerCta);
  EXPECT_EQ(tl.grid[1], wave / (4096u / fp8k::kColsPerCta));
}

TEST(ElementwiseTable, TheStridingGridsHoldFewCtasAnSm) {
  // The row path of SwiGLU at 4096 x 14336: a table's CTAs stride, the
  // threads of kTableCtasPerSm CTAs of 256 an SM in CTAs of
  // kTableRowThreads (fewer tables to fill); a plain conversion, a warp per
  // step (eight blocks of four lanes) in CTAs of 256.
  static_assert(fp8k::kTableCtasPerSm * 256 % fp8k::kTableRowThreads == 0);
  const unsigned bigCtasPerSm =
      fp8k::kTableCtasPerSm * 256 / fp8k::kTableRowThreads;
  const ElementwiseSpec swiglu =
      quantizeOf(swigluProgram(), Granularity::block(1, 128));
  const ElementwiseSpec plain =
      quantizeOf(EwProgram::identity(DType::BF16), Granularity::block(1, 128));
  const AuxLaunch big = elementwiseLaunch(swiglu, 0, 1, 4096, 14336, 132);
  EXPECT_EQ(big.block[0], unsigned(fp8k::kTableRowThreads));
  EXPECT_EQ(big.grid[0], 132u * bigCtasPerSm);
  const AuxLaunch conv = elementwiseLaunch(plain, 0, 1, 4096, 14336, 132);
  EXPECT_EQ(conv.block[0], 256u);
  EXPECT_EQ(conv.grid[0], 4096u * 112 / 8 / 8);
  // Its kernel is built for CTAs of that size; per-row scales (whole rows,
  // a CTA of 256 split among rows) keep 256.
  auto k = emitElementwise(swiglu);
  ASSERT_TRUE(k.isOk()) << k.message();
  EXPECT_NE((*k)[0].source.find("__launch_bounds__(" +
                                std::to_string(fp8k::kTableRowThreads) + ")"),
            std::string::npos);
  const ElementwiseSpec perRow =
      quantizeOf(swigluProgram(), Granularity::perRow());
  ASSERT_GE(tabulatedValue(perRow), 0);
  auto r = emitElementwise(perRow);
  ASSERT_TRUE(r.isOk()) << r.message();
  EXPECT_NE((*r)[0].source.find("__launch_bounds__(256)"), std::string::npos);
  EXPECT_EQ(elementwiseLaunch(perRow, 0, 1, 4096, 14336, 132).block[0], 256u);
  // sm_100a keeps CTAs of 256 (its ptxas spills SwiGLU at 64 registers).
  ElementwiseSpec sm100 = swiglu;
  sm100.arch = Arch::SM100a;
  EXPECT_EQ(elementwiseLaunch(sm100, 0, 1, 4096, 14336, 132).block[0], 256u);
  auto k100 = emitElementwise(sm100);
  ASSERT_TRUE(k100.isOk()) << k100.message();
  EXPECT_EQ((*k100)[0].source.find("__launch_bounds__(" +
                                   std::to_string(fp8k::kTableRowThreads)),
            std::string::npos);
  // Warps too few to fill the large CTAs (a decode step: 16 x 1024 is 512
  // blocks, 128 warps; or one warp short of the grid) keep CTAs of 256,
  // spread over more SMs.
  const AuxLaunch small = elementwiseLaunch(swiglu, 0, 1, 16, 1024, 132);
  EXPECT_EQ(small.block[0], 256u);
  EXPECT_EQ(small.grid[0], 16u * 8 / 4 / 8);
  // Rows of 512 columns: a warp a row (four blocks); the large CTAs from
  // 132 * bigCtasPerSm * kTableRowThreads / 32 rows.
  const int64_t fullRows =
      int64_t(132) * bigCtasPerSm * fp8k::kTableRowThreads / 32;
  EXPECT_EQ(elementwiseLaunch(swiglu, 0, 1, fullRows, 512, 132).block[0],
            unsigned(fp8k::kTableRowThreads));
  EXPECT_EQ(elementwiseLaunch(swiglu, 0, 1, fullRows - 1, 512, 132).block[0],
            256u);
  ElementwiseSpec ew;
  ew.kind = AuxKind::Elementwise;
  ew.program = swigluProgram();
  ew.out = DType::BF16;
  EXPECT_EQ(elementwiseLaunch(ew, 0, 1, 4096, 14336, 132).grid[0],
            132u * fp8k::kTableCtasPerSm);
  // A table's 32 KiB, and a fill that pays for itself.
  EXPECT_EQ(fp8k::kTableEntries * 4, 32 * 1024);
  // A CTA fills its table from kTableElementsPerEntry elements an entry,
  // whatever its size: at least as many elements a thread as the fill's
  // evaluations a thread. SwiGLU on 4096 x 2048 (62 elements a thread)
  // fills in CTAs of 1024, would not in CTAs of 256.
  const int64_t perCta =
      int64_t(fp8k::kTableEntries) * fp8k::kTableElementsPerEntry;
  EXPECT_GE(perCta / 256, fp8k::kTableEntries / 256);
  EXPECT_TRUE(fp8k::table_pays(3 * perCta, 3));
  EXPECT_FALSE(fp8k::table_pays(3 * perCta - 1, 3));
  const AuxLaunch half = elementwiseLaunch(swiglu, 0, 1, 4096, 2048, 132);
  ASSERT_EQ(half.block[0], unsigned(fp8k::kTableRowThreads));
  EXPECT_TRUE(fp8k::table_pays(int64_t(4096) * 2048, half.grid[0]));
  EXPECT_FALSE(fp8k::table_pays(int64_t(4096) * 2048, half.grid[0] * 4));
}
