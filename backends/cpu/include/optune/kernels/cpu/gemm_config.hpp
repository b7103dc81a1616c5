// GemmConfig: the schedule of the CPU GEMM kernel as one plain struct (CLBlast style). It is a
// structural type, so the kernel takes it as a template argument (`gemm<GemmConfig{...}>`) and a
// tuned table can hold it as a constexpr value. The knobs of the tuning space (in
// kernels/src/cpu_gemm_template.cpp) map one to one onto these fields.
#pragma once

#include <cstdint>

namespace optune::kernels::cpu {

// Order of the three cache-blocking loops over N (jc, step NC), K (pc, step KC) and M (ic,
// step MC). Each operand is packed right inside the loops that fix its block: B (KC x NC)
// inside jc and pc, A (MC x KC) inside ic and pc.
enum class LoopOrder : int {
  kJcPcIc = 0,  // BLIS/GotoBLAS: B panel packed once per (jc, pc), reused by every ic block
  kPcJcIc = 1,  // K outermost: each C block is revisited once per KC block
  kIcPcJc = 2,  // A block packed once per (ic, pc), reused by every jc block; B repacked per ic
};

// Which loop the threads split.
enum class ParallelLoop : int {
  kJc = 0,  // N: each thread owns a slice of columns (multiple of NR), with its own buffers
  kIc = 1,  // M: each thread owns a slice of rows (multiple of MR), with its own buffers
  kJr = 2,  // micro-panels of NR columns inside each block: packed A and B are shared by the
            // team, packed cooperatively, with barriers (BLIS's jr parallelism)
};

struct GemmConfig {
  int mc = 96;    // rows of A per cache block (multiple of mr)
  int nc = 1024;  // columns of B per cache block (multiple of nr)
  int kc = 256;   // depth per cache block
  int mr = 6;     // micro-tile rows
  int nr = 16;    // micro-tile columns (multiple of lanes)
  int lanes = 8;  // float32 SIMD lanes: 4 (SSE/NEON), 8 (AVX2), 16 (AVX-512)
  bool pack_a = true;
  bool pack_b = true;
  LoopOrder loop_order = LoopOrder::kJcPcIc;
  int unroll = 4;  // K-loop unroll of the micro-kernel: 1, 2, 4 or 8
  int threads = 1;
  ParallelLoop parallel = ParallelLoop::kJc;
  // The cache blocks (mc, nc, kc) and threads are given at run time (gemm_detail::RunTimeBlocks),
  // not by the fields above: one compiled candidate then serves every config that differs from it
  // only in them (the tuner compiles once and runs many). Tuned tables leave it false.
  bool run_time_blocks = false;

  friend constexpr bool operator==(const GemmConfig&, const GemmConfig&) = default;
};

// Why a config cannot be instantiated at all, or nullptr when it can. (Performance rules such
// as the register budget of the micro-tile belong to the tuning space, not here.)
constexpr const char* gemm_config_error(const GemmConfig& c) {
  if (c.lanes != 4 && c.lanes != 8 && c.lanes != 16) return "lanes must be 4, 8 or 16";
  if (c.mr < 1 || c.mr > 32) return "mr must be in 1..32";
  if (c.nr < c.lanes || c.nr % c.lanes != 0 || c.nr / c.lanes > 8) {
    return "nr must be 1..8 multiples of lanes";
  }
  if (c.mc < c.mr || c.mc % c.mr != 0) return "mc must be a positive multiple of mr";
  if (c.nc < c.nr || c.nc % c.nr != 0) return "nc must be a positive multiple of nr";
  if (c.kc < 1) return "kc must be positive";
  if (c.unroll != 1 && c.unroll != 2 && c.unroll != 4 && c.unroll != 8) {
    return "unroll must be 1, 2, 4 or 8";
  }
  if (c.threads < 1 || c.threads > 1024) return "threads must be in 1..1024";
  return nullptr;
}

}  // namespace optune::kernels::cpu
