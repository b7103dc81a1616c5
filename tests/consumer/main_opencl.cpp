// Calls optune::gemm on OpenCL, defined by the header optune_apply_best(... TARGET opencl) generated:
// the tuned shape must run its tuned row (the build options of the header's table), the listed
// shape that was never tuned the row apply-best gave it (its nearest tuned shape's config) when
// that config is valid for it, an unlisted shape the template's default, all with the right answer. Programs go through the on-disk cache in
// the folder named by the first argument; each call prints where its program came from. Exits
// non-zero on a wrong answer or dispatch.
#include <cmath>
#include <cstdio>
#include <random>
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

Buffer upload(cl_context context, std::vector<float>& data) {
  cl_int error = CL_SUCCESS;
  Buffer buffer(clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, data.size() * sizeof(float),
                               data.data(), &error));
  check(error, "clCreateBuffer");
  return buffer;
}

// Runs one GEMM through the tuned table; returns 0 when the answer is right and the dispatch is
// the expected one (a tuned run with exactly the header's build options).
int run(optune::opencl::Runtime& runtime, cl_context context, cl_command_queue queue, long M, long N, long K,
        bool expect_tuned) {
  std::vector<float> a(M * K), b(K * N), c(M * N, NAN);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> value(-1, 1);
  for (auto& x : a) x = value(rng);
  for (auto& x : b) x = value(rng);
  Buffer A = upload(context, a), B = upload(context, b), C = upload(context, c);
  const optune::opencl::Launch launch = optune::gemm(runtime, M, N, K, A.get(), B.get(), C.get());
  check(clEnqueueReadBuffer(queue, C.get(), CL_TRUE, 0, c.size() * sizeof(float), c.data(), 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
  double worst = 0;
  for (long i = 0; i < M; ++i)
    for (long j = 0; j < N; ++j) {
      double want = 0;
      for (long k = 0; k < K; ++k) want += double(a[i * K + k]) * b[k * N + j];
      const float got = c[i * N + j];
      worst = std::isnan(got) ? INFINITY : std::max(worst, std::abs(want - got));  // NaN: left unwritten
    }
  bool options_right = true;
  if (expect_tuned) {
    const std::string key = "gemm.f32.M" + std::to_string(M) + ".N" + std::to_string(N) + ".K" + std::to_string(K);
    options_right = false;
    for (const auto& row : optune::tuned::kGemm)
      if (row.workload_key == key) options_right = launch.kernel.build_options == row.build_options;
  }
  std::printf("opencl gemm %ldx%ldx%ld: %s config, program from %s, max abs error %.3g\n  %s\n", M, N, K,
              launch.tuned ? "tuned" : "default", program_source(launch.program), worst,
              launch.kernel.build_options.c_str());
  return (worst < 1e-3 && launch.tuned == expect_tuned && options_right) ? 0 : 1;
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
  return run(runtime, context.get(), queue.get(), 16, 24, 8, true) +
         run(runtime, context.get(), queue.get(), 33, 20, 17, untuned_has_row) +
         run(runtime, context.get(), queue.get(), 5, 7, 9, false);
}
