// y = 2 x + 1, with the fault MODE picks (faulty_cpu.toml).
#include <cstdint>

extern "C" void faulty(const float* x, float* y, std::int32_t n) {
  if (MODE == 2) {
    for (volatile int spin = 1; spin;) {
    }
  }
  if (MODE == 3) *static_cast<volatile int*>(nullptr) = 1;
  for (std::int32_t i = MODE == 5 ? 1 : 0; i < n; ++i) y[i] = 2 * x[i] + 1 + (MODE == 1 ? 1e-3f : 0.0f);
  if (MODE == 4) y[n] = 0;
}

extern "C" void faulty_reference(const float* x, float* y, std::int32_t n) {
  for (std::int32_t i = 0; i < n; ++i) y[i] = 2 * x[i] + 1;
}
