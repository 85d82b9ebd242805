// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-select-config=tuning-db=%S/Inputs/tuning-db.json | FileCheck %s
// RUN: fp8-opt %s -split-input-file -verify-diagnostics "--fp8-select-config=tuning-db=%S/Inputs/tuning-db.json m-hint=0" | FileCheck %s --check-prefix=RUNTIME
// RUN: not fp8-opt %s --fp8-select-config=tuning-db=%S/Inputs/missing.json 2>&1 | FileCheck %s --check-prefix=NODB
// RUN: not fp8-opt %s --fp8-select-config=tuning-db=%S/Inputs/tuning-db-v3.json 2>&1 | FileCheck %s --check-prefix=V3
// RUN: not fp8-opt %s --fp8-select-config=sm-count=0 2>&1 | FileCheck %s --check-prefix=SMS
// RUN: not fp8-opt %s --fp8-select-config=tuning-db=%S/Inputs/tuning-db-zero-block.json 2>&1 | FileCheck %s --check-prefix=ZEROBLOCK
// RUN: not fp8-opt %s --fp8-select-config=tuning-db=%S/Inputs/tuning-db-wrapped-stages.json 2>&1 | FileCheck %s --check-prefix=WRAPPED
// RUN: not fp8-opt %s --fp8-select-config=tuning-db=/dev/zero 2>&1 | FileCheck %s --check-prefix=DEVZERO

// NODB: error: cannot read tuning database '{{.*}}missing.json'
// V3: error: tuning database '{{.*}}tuning-db-v3.json' has format 3; this build reads formats 1 and 2
// SMS: error: expected sm-count >= 1 and m-hint >= 0, found sm-count = 0, m-hint = 4096
// A database is input: its tiles are checked when it is read, before any
// arithmetic on them, and a value is never wrapped to 32 bits.
// ZEROBLOCK: error: '{{.*}}tuning-db-zero-block.json', entry 0: expected 'block_n' in tile to be an integer in [1, 256], found 0
// WRAPPED: error: '{{.*}}tuning-db-wrapped-stages.json', entry 0: expected 'stages' in tile to be an integer in [2, 32], found 4294967300
// DEVZERO: error: expected tuning database '/dev/zero' to be a regular file, found a character device

// The database has this recipe at this exact shape.
// CHECK-LABEL: func.func @tuned_exact
// The spec is derived here, once, and recorded with its tile as fp8.gemm.
// CHECK: fp8.scaled_matmul {{.*}}fp8.gemm = #fp8.gemm<{a = {format = "e4m3fn", granularity = "1x128", layout = "k_major"}, accumulate = false, arch = "sm_90a", b = {format = "e4m3fn", granularity = "128x128", layout = "k_major"}, groups = 1, k = 256, kind = "dense", m = 256, n = 512, out = "bf16", promotion_interval = 128, tile = {{{.*}}block_n = 64{{.*}}stages = 6{{.*}}}}>, fp8.tile_source = "tuning-db: exact 256x512x256"}
module attributes {fp8.target = "sm_90a"} {
  func.func @tuned_exact(%a: tensor<256x256xf8E4M3FN>, %as: tensor<256x2xf32>,
                         %b: tensor<512x256xf8E4M3FN>, %bs: tensor<4x2xf32>) -> tensor<256x512xbf16> {
    %d = fp8.scaled_matmul %a scale %as granularity <1x128>, %b scale %bs granularity <128x128>
           promotion_interval 128
        : tensor<256x256xf8E4M3FN>, tensor<256x2xf32>, tensor<512x256xf8E4M3FN>, tensor<4x2xf32> -> tensor<256x512xbf16>
    return %d : tensor<256x512xbf16>
  }
}

// -----

// Another M: the nearest entry with the same N and K; a dynamic M is looked
// up at the M hint, or left to the runtime with m-hint=0.
// CHECK-LABEL: func.func @tuned_nearest
// CHECK: fp8.tile_source = "tuning-db: nearest, measured at 256x512x256"
// CHECK: fp8.tile_source = "tuning-db: nearest, measured at 256x512x256 for M = 4096 (m-hint)"
// RUNTIME-LABEL: func.func @tuned_nearest
// RUNTIME: fp8.tile_source = "tuning-db: nearest, measured at 256x512x256"}
// The runtime re-selects the tile; the one recorded is M = 4096's, M stays
// dynamic.
// RUNTIME: fp8.gemm = #fp8.gemm<{{{.*}}m = -1, {{.*}}}>, fp8.tile_source = "runtime"
module attributes {fp8.target = "sm_90a"} {
  func.func @tuned_nearest(%a: tensor<512x256xf8E4M3FN>, %as: tensor<512x2xf32>,
                           %x: tensor<?x256xf8E4M3FN>, %xs: tensor<?x2xf32>,
                           %b: tensor<512x256xf8E4M3FN>, %bs: tensor<4x2xf32>) -> (tensor<512x512xbf16>, tensor<?x512xbf16>) {
    %d = fp8.scaled_matmul %a scale %as granularity <1x128>, %b scale %bs granularity <128x128>
           promotion_interval 128
        : tensor<512x256xf8E4M3FN>, tensor<512x2xf32>, tensor<512x256xf8E4M3FN>, tensor<4x2xf32> -> tensor<512x512xbf16>
    %e = fp8.scaled_matmul %x scale %xs granularity <1x128>, %b scale %bs granularity <128x128>
           promotion_interval 128
        : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<512x256xf8E4M3FN>, tensor<4x2xf32> -> tensor<?x512xbf16>
    return %d, %e : tensor<512x512xbf16>, tensor<?x512xbf16>
  }
}

// -----

// No entry for this recipe: the heuristic.
// CHECK-LABEL: func.func @heuristic
// CHECK: fp8.gemm = #fp8.gemm<{{{.*}}tile = {block_k = 128, block_m = 128, {{.*}}}}>, fp8.tile_source = "heuristic, 132 SMs"
module attributes {fp8.target = "sm_90a"} {
  func.func @heuristic(%a: tensor<1024x256xf8E4M3FN>, %as: tensor<1024x1xf32>,
                       %b: tensor<1024x256xf8E4M3FN>, %bs: tensor<1024x1xf32>) -> tensor<1024x1024xbf16> {
    %d = fp8.scaled_matmul %a scale %as granularity <per_row>, %b scale %bs granularity <per_row>
           promotion_interval 128
        : tensor<1024x256xf8E4M3FN>, tensor<1024x1xf32>, tensor<1024x256xf8E4M3FN>, tensor<1024x1xf32> -> tensor<1024x1024xbf16>
    return %d : tensor<1024x1024xbf16>
  }
}

// -----

// The database's tile for this recipe is illegal: a warning, the heuristic.
// CHECK-LABEL: func.func @illegal_entry
// CHECK: fp8.tile_source = "heuristic, 132 SMs"
module attributes {fp8.target = "sm_90a"} {
  func.func @illegal_entry(%a: tensor<128x256xf8E4M3FN>, %as: tensor<1x1xf32>,
                           %b: tensor<256x256xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<128x256xbf16> {
    // expected-warning @+1 {{the tuning database's tile (measured at 128x256x256) does not fit this GEMM: expected block_m 64, 128 or 192, found 96; using the heuristic}}
    %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
        : tensor<128x256xf8E4M3FN>, tensor<1x1xf32>, tensor<256x256xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x256xbf16>
    return %d : tensor<128x256xbf16>
  }
}

// -----

// An MN-major operand has no sm_90a kernel (--fp8-verify-target would have
// transposed it).
module attributes {fp8.target = "sm_90a"} {
  func.func @no_kernel(%a: tensor<128x256xf8E4M3FN>, %as: tensor<1x1xf32>,
                       %b: tensor<256x256xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<128x256xbf16> {
    // expected-error @+1 {{'fp8.scaled_matmul' op has no legal tile configuration on sm_90a: expected K-major A and B on sm_90a (FP8 wgmma reads both operands K-major from shared memory), found A k_major and B mn_major: transpose the operand first}}
    %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor> layout mn_major
        : tensor<128x256xf8E4M3FN>, tensor<1x1xf32>, tensor<256x256xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x256xbf16>
    return %d : tensor<128x256xbf16>
  }
}

// -----

// expected-error @+1 {{expected the module's 'fp8.target' (run --fp8-verify-target{arch=...} first)}}
module {
  func.func @no_target(%a: tensor<128x256xf8E4M3FN>, %as: tensor<1x1xf32>,
                       %b: tensor<256x256xf8E4M3FN>, %bs: tensor<1x1xf32>) -> tensor<128x256xbf16> {
    %d = fp8.scaled_matmul %a scale %as granularity <per_tensor>, %b scale %bs granularity <per_tensor>
        : tensor<128x256xf8E4M3FN>, tensor<1x1xf32>, tensor<256x256xf8E4M3FN>, tensor<1x1xf32> -> tensor<128x256xbf16>
    return %d : tensor<128x256xbf16>
  }
}

// -----

// A contiguous grouped GEMM (an MoE layer's experts): its rows are the
// routing's, so the runtime picks the tile whatever the M hint.
// CHECK-LABEL: func.func @moe_experts
// CHECK: fp8.grouped_scaled_matmul contiguous{{.*}}kind = "grouped_contiguous"{{.*}}fp8.tile_source = "runtime"
// RUNTIME-LABEL: func.func @moe_experts
// RUNTIME: fp8.tile_source = "runtime"
module attributes {fp8.target = "sm_90a"} {
  func.func @moe_experts(%offsets: tensor<9xi32>, %a: tensor<?x256xf8E4M3FN>, %as: tensor<?x2xf32>,
                         %b: tensor<8x128x256xf8E4M3FN>, %bs: tensor<8x1x2xf32>) -> tensor<?x128xbf16> {
    %d = fp8.grouped_scaled_matmul contiguous(%offsets : tensor<9xi32>)
           %a scale %as granularity <1x128>, %b scale %bs granularity <128x128> promotion_interval 128
        : tensor<?x256xf8E4M3FN>, tensor<?x2xf32>, tensor<8x128x256xf8E4M3FN>, tensor<8x1x2xf32> -> tensor<?x128xbf16>
    return %d : tensor<?x128xbf16>
  }
}

// -----

// A K-grouped GEMM: its K is every group's tokens, known at launch; the
// spec records it as -1 (dynamic) and the runtime picks the tile.
// CHECK-LABEL: func.func @moe_wgrad
// CHECK: fp8.grouped_scaled_matmul along_k{{.*}}k = -1, kind = "grouped_k", m = 128, n = 256{{.*}}fp8.tile_source = "runtime"
// RUNTIME-LABEL: func.func @moe_wgrad
// RUNTIME: fp8.tile_source = "runtime"
module attributes {fp8.target = "sm_90a"} {
  func.func @moe_wgrad(%offsets: tensor<5xi32>, %a: tensor<128x?xf8E4M3FN>, %as: tensor<128x?xf32>,
                       %b: tensor<256x?xf8E4M3FN>, %bs: tensor<256x?xf32>) -> tensor<4x128x256xf32> {
    %d = fp8.grouped_scaled_matmul along_k(%offsets : tensor<5xi32>)
           %a scale %as granularity <1x128>, %b scale %bs granularity <1x128> promotion_interval 128
        : tensor<128x?xf8E4M3FN>, tensor<128x?xf32>, tensor<256x?xf8E4M3FN>, tensor<256x?xf32> -> tensor<4x128x256xf32>
    return %d : tensor<4x128x256xf32>
  }
}
