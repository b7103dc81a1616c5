// A histogram of bytes into 256 bins (histogram_cpu.toml); MODE 1 leaves the last bin unwritten.
#include <cstdint>

extern "C" void histogram(const std::uint8_t* values, std::int32_t* bins, std::int32_t n) {
  const int written = MODE == 1 ? 255 : 256;
  for (int b = 0; b < written; ++b) bins[b] = 0;
  for (std::int32_t i = 0; i < n; ++i)
    if (values[i] < written) ++bins[values[i]];
}
