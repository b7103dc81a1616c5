// y = 2 x + 1, behaving as MODE says (behaviour.toml).
#include <cstdint>

#if MODE == 4
#error MODE 4 does not compile
#endif

extern "C" void behaviour(const float* x, float* y, std::int32_t n) {
  if (MODE == 3) {
    for (volatile int spin = 1; spin;) {
    }
  }
  if (MODE == 2) *static_cast<volatile int*>(nullptr) = 1;
  for (std::int32_t i = MODE == 6 ? 1 : 0; i < n; ++i) y[i] = 2 * x[i] + 1 + (MODE == 1 ? 1e-3f : 0.0f);
  if (MODE == 5) y[n] = 0;
}

extern "C" void behaviour_reference(const float* x, float* y, std::int32_t n) {
  for (std::int32_t i = 0; i < n; ++i) y[i] = 2 * x[i] + 1;
}
