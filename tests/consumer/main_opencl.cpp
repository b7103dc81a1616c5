// Calls optune::gemm (and gemm_bf16, gemm_i8) on OpenCL, defined by the header
// optune_apply_best(... TARGET opencl) generated:
// the tuned shape must run its tuned row (the build options of the header's table), the listed
// shape that was never tuned the row apply-best gave it (its nearest tuned shape's config) when
// that config is valid for it, an unlisted shape the template's default, all with the right answer. Programs go through the on-disk cache in
// the folder named by the first argument; each call prints where its program came from. Exits
// non-zero on a wrong answer or dispatch.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <optune_tuned.hpp>

namespace {

using optune::opencl::Buffer;
using optune::opencl::check;

const char* program_source(optune::opencl::ProgramSource source) {
  switch (source) {
    case optune::opencl::ProgramSource::kBuilt: return "compiled";
    case optune::opencl::ProgramSource::kDiskCache: return "disk cache";
    case optune::opencl::ProgramSource::kMemory: return "memory";
  }
  return "?";
}

// The element types of a GEMM's buffers, as the header's entry points take them: f32 (gemm),
// bf16 (gemm_bf16: float32 sums, a bf16 output) and i8 (gemm_i8: s8 inputs, exact int32 output).
enum class Type { kF32, kBf16, kI8 };

const char* type_name(Type type) { return type == Type::kF32 ? "f32" : type == Type::kBf16 ? "bf16" : "i8"; }

// An input value: small integers, scaled for the floating types, so that every one is exact in
// the buffer's type and the double reference is the exact product.
double input_value(Type type, int v) { return type == Type::kI8 ? v * 12.0 : v / 4.0; }

// n values of `type` encoded into the buffer's bytes.
std::vector<unsigned char> encode(Type type, const std::vector<double>& values) {
  const std::size_t width = type == Type::kF32 ? 4 : type == Type::kBf16 ? 2 : 1;
  std::vector<unsigned char> bytes(values.size() * width);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float f = static_cast<float>(values[i]);
    std::uint32_t bits = 0;
    std::memcpy(&bits, &f, 4);
    if (type == Type::kF32) std::memcpy(&bytes[i * 4], &bits, 4);
    if (type == Type::kBf16) {
      const std::uint16_t high = static_cast<std::uint16_t>(bits >> 16);  // exact: the values fit bf16
      std::memcpy(&bytes[i * 2], &high, 2);
    }
    if (type == Type::kI8) bytes[i] = static_cast<unsigned char>(static_cast<std::int8_t>(values[i]));
  }
  return bytes;
}

// Output element i of the downloaded bytes: f32, bf16 or int32; NaN where a float was left unwritten.
double decode_output(Type type, const std::vector<unsigned char>& bytes, std::size_t i) {
  if (type == Type::kI8) {
    std::int32_t v = 0;
    std::memcpy(&v, &bytes[i * 4], 4);
    return v;
  }
  std::uint32_t bits = 0;
  if (type == Type::kF32) std::memcpy(&bits, &bytes[i * 4], 4);
  if (type == Type::kBf16) {
    std::uint16_t high = 0;
    std::memcpy(&high, &bytes[i * 2], 2);
    bits = std::uint32_t{high} << 16;
  }
  float f = 0;
  std::memcpy(&f, &bits, 4);
  return f;
}

Buffer upload(cl_context context, std::vector<unsigned char> bytes) {
  cl_int error = CL_SUCCESS;
  Buffer buffer(clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes.size(), bytes.data(), &error));
  check(error, "clCreateBuffer");
  return buffer;
}

optune::opencl::Launch call(Type type, optune::opencl::Runtime& runtime, long M, long N, long K, cl_mem A, cl_mem B,
                            cl_mem C) {
  if (type == Type::kBf16) return optune::gemm_bf16(runtime, M, N, K, A, B, C);
  if (type == Type::kI8) return optune::gemm_i8(runtime, M, N, K, A, B, C);
  return optune::gemm(runtime, M, N, K, A, B, C);
}

std::span<const optune::opencl::TunedKernel> table(Type type) {
  if (type == Type::kBf16) return optune::tuned::kGemmBf16;
  if (type == Type::kI8) return optune::tuned::kGemmI8;
  return optune::tuned::kGemm;
}

// Runs one GEMM through the tuned table of its type; returns 0 when the answer is right (exact
// for i8, within the output's rounding for bf16) and the dispatch is the expected one (a tuned
// run with exactly the header's build options).
int run(Type type, optune::opencl::Runtime& runtime, cl_context context, cl_command_queue queue, long M, long N,
        long K, bool expect_tuned) {
  std::vector<double> a(M * K), b(K * N);
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> value(-8, 8);
  for (auto& x : a) x = input_value(type, value(rng));
  for (auto& x : b) x = input_value(type, value(rng));
  const std::size_t out_width = type == Type::kBf16 ? 2 : 4;
  std::vector<unsigned char> c(M * N * out_width, 0xff);  // NaN in f32 and bf16
  Buffer A = upload(context, encode(type, a)), B = upload(context, encode(type, b)), C = upload(context, c);
  const optune::opencl::Launch launch = call(type, runtime, M, N, K, A.get(), B.get(), C.get());
  check(clEnqueueReadBuffer(queue, C.get(), CL_TRUE, 0, c.size(), c.data(), 0, nullptr, nullptr), "clEnqueueReadBuffer");
  double worst = 0;  // relative to max(1, |want|)
  for (long i = 0; i < M; ++i)
    for (long j = 0; j < N; ++j) {
      double want = 0;
      for (long k = 0; k < K; ++k) want += a[i * K + k] * b[k * N + j];
      const double got = decode_output(type, c, i * N + j);
      worst = std::isnan(got) ? INFINITY : std::max(worst, std::abs(want - got) / std::max(1.0, std::abs(want)));
    }
  bool options_right = true;
  if (expect_tuned) {
    const std::string key = std::string("gemm.") + type_name(type) + ".M" + std::to_string(M) + ".N" +
                            std::to_string(N) + ".K" + std::to_string(K);
    options_right = false;
    for (const auto& row : table(type))
      if (row.workload_key == key) options_right = launch.kernel.build_options == row.build_options;
  }
  const double tolerance = type == Type::kI8 ? 0.0 : type == Type::kBf16 ? 1.0 / 128 : 1e-5;
  std::printf("opencl gemm %s %ldx%ldx%ld: %s config, program from %s, max relative error %.3g\n  %s\n",
              type_name(type), M, N, K, launch.tuned ? "tuned" : "default", program_source(launch.program), worst,
              launch.kernel.build_options.c_str());
  return (worst <= tolerance && launch.tuned == expect_tuned && options_right) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer_opencl <program-cache-dir>\n");
    return 2;
  }
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  check(clGetPlatformIDs(1, &platform, nullptr), "clGetPlatformIDs");
  check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
  cl_int error = CL_SUCCESS;
  optune::opencl::Context context(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &error));
  check(error, "clCreateContext");
  optune::opencl::Queue queue(clCreateCommandQueue(context.get(), device, 0, &error));
  check(error, "clCreateCommandQueue");

  optune::opencl::Runtime runtime(queue.get(), {argv[1]});
  std::printf("tuned for %s on %s, %zu GEMM shapes; running on %s\n", optune::tuned::kTarget,
              optune::tuned::kDevice, optune::tuned::kGemm.size(), runtime.device().name.c_str());
  bool untuned_has_row = false;
  for (const auto& row : optune::tuned::kGemm) untuned_has_row |= row.workload_key == std::string_view("gemm.f32.M33.N20.K17");
  return run(Type::kF32, runtime, context.get(), queue.get(), 16, 24, 8, true) +
         run(Type::kF32, runtime, context.get(), queue.get(), 33, 20, 17, untuned_has_row) +
         run(Type::kF32, runtime, context.get(), queue.get(), 5, 7, 9, false) +
         run(Type::kBf16, runtime, context.get(), queue.get(), 16, 24, 8, true) +
         run(Type::kI8, runtime, context.get(), queue.get(), 16, 24, 8, true) +
         run(Type::kI8, runtime, context.get(), queue.get(), 5, 7, 9, false);
}
