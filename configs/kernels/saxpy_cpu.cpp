// z = a * x + y for the cpu backend (saxpy_cpu.toml). optune compiles this file with BLOCK and
// UNROLL as -D defines into a shared object and calls `saxpy` with the file's args in order;
// `saxpy_reference` is the check. Any n is handled: blocks and unrolled steps have tails.
#include <cstdint>

extern "C" void saxpy(const float* x, const float* y, float* z, float a, std::int32_t n) {
  for (std::int32_t start = 0; start < n; start += BLOCK) {
    const std::int32_t end = n - start > BLOCK ? start + BLOCK : n;
    std::int32_t i = start;
    for (; i + UNROLL <= end; i += UNROLL)
      for (int u = 0; u < UNROLL; ++u) z[i + u] = a * x[i + u] + y[i + u];  // constant bound: unrolled
    for (; i < end; ++i) z[i] = a * x[i] + y[i];
  }
}

extern "C" void saxpy_reference(const float* x, const float* y, float* z, float a, std::int32_t n) {
  for (std::int32_t i = 0; i < n; ++i) z[i] = a * x[i] + y[i];
}
