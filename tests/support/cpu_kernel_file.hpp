// A user's cpu kernel file as the command's tests write it: a kernel `name` in `name`.cpp computing
// y of x over N floats, with knobs the test chooses, checked against `name`_reference in the same
// source.
#pragma once

#include <string>

namespace optune::test_support {

// The kernel file's text: N = `n`, the knob lines `knobs`.
inline std::string cpu_kernel_file(const std::string& name, int n, const std::string& knobs) {
  return "name = \"" + name + "\"\nbackend = \"cpu\"\nsource = \"" + name + ".cpp\"\nentry = \"" + name +
         "\"\nflops = \"N\"\nargs = [\n"
         "  { name = \"x\", kind = \"buffer\", dtype = \"f32\", count = \"N\" },\n"
         "  { name = \"y\", kind = \"buffer\", dtype = \"f32\", count = \"N\", output = true },\n"
         "  { name = \"n\", kind = \"scalar\", dtype = \"i32\", value = \"N\" },\n]\n"
         "[extents]\nN = " + std::to_string(n) + "\n[knobs]\n" + knobs + "\n"
         "[check]\nreference = \"" + name + "_reference\"\nrtol = 1e-6\natol = 1e-6\n";
}

// A source for it where every config of knob V computes y = 2x, and the reference does so too and
// then runs `reference_tail` (a fault of the reference's own, e.g. "y[n] = 0;").
inline std::string doubling_source(const std::string& name, const std::string& reference_tail = "") {
  return "#include <cstdint>\n"
         "extern \"C\" void " + name + "(const float* x, float* y, std::int32_t n) {\n"
         "  for (std::int32_t i = 0; i < n; ++i) y[i] = 2 * x[i] + (V - V);\n}\n"
         "extern \"C\" void " + name + "_reference(const float* x, float* y, std::int32_t n) {\n"
         "  for (std::int32_t i = 0; i < n; ++i) y[i] = 2 * x[i];\n  " + reference_tail + "\n}\n";
}

}  // namespace optune::test_support
