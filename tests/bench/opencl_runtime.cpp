// bench_opencl_runtime: what build-time consumption on OpenCL costs an application, on the first
// OpenCL device. (1) Getting a program: compiling gemm.cl with the default config's defines
// against loading the binary from optune's on-disk cache (a new Runtime on the same folder), both
// in a fresh Runtime. (2) A call: optune::opencl::gemm (workload key, table lookup, buffer checks,
// arguments, enqueue) against a bare clEnqueueNDRangeKernel of the same built kernel, each
// followed by clFinish. Medians over rounds, with their ratio.
//
//   POCL_KERNEL_CACHE=0 build/tests/bench/bench_opencl_runtime [M,N,K] [rounds]
// (POCL_KERNEL_CACHE=0: PoCL keeps a cache of its own, which would make every compile a load.)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "optune/kernels/opencl/program_cache.hpp"
#include "optune/kernels/opencl/runtime.hpp"

namespace {

using namespace optune;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

opencl::Buffer buffer(cl_context context, std::size_t floats) {
  cl_int error = CL_SUCCESS;
  std::vector<float> ones(floats, 1.0f);
  opencl::Buffer made(clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, floats * sizeof(float),
                                     ones.data(), &error));
  opencl::check(error, "clCreateBuffer");
  return made;
}

}  // namespace

int main(int argc, char** argv) {
  long M = 256, N = 256, K = 256;
  if (argc > 1 && std::sscanf(argv[1], "%ld,%ld,%ld", &M, &N, &K) != 3) {
    std::fprintf(stderr, "usage: bench_opencl_runtime [M,N,K] [rounds]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;

  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  opencl::check(clGetPlatformIDs(1, &platform, nullptr), "clGetPlatformIDs");
  opencl::check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
  cl_int error = CL_SUCCESS;
  opencl::Context context(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &error));
  opencl::check(error, "clCreateContext");
  opencl::Queue queue(clCreateCommandQueue(context.get(), device, 0, &error));
  opencl::check(error, "clCreateCommandQueue");
  opencl::Buffer A = buffer(context.get(), M * K), B = buffer(context.get(), K * N), C = buffer(context.get(), M * N);

  // (1) Each round: a fresh cache folder; one Runtime compiles (and stores), a second loads.
  std::vector<double> compile, load;
  const fs::path root = fs::temp_directory_path() / ("optune-bench-runtime-" + std::to_string(::getpid()));
  for (int round = 0; round < rounds; ++round) {
    const std::string cache = (root / std::to_string(round)).string();
    for (auto* times : {&compile, &load}) {
      opencl::Runtime runtime(queue.get(), {cache});
      const auto start = Clock::now();
      const opencl::Launch launch = opencl::gemm(runtime, {}, M, N, K, A.get(), B.get(), C.get());
      opencl::check(clFinish(queue.get()), "clFinish");
      times->push_back(seconds_since(start));
      const auto expected = times == &compile ? opencl::ProgramSource::kBuilt : opencl::ProgramSource::kDiskCache;
      if (launch.program != expected) {
        std::fprintf(stderr, "round %d: the program did not come from where expected\n", round);
        return 1;
      }
    }
  }
  fs::remove_all(root);

  // (2) Calls on a warm Runtime against bare enqueues of the same kernel.
  opencl::Runtime runtime(queue.get());
  const opencl::Launch launch = opencl::gemm(runtime, {}, M, N, K, A.get(), B.get(), C.get());
  opencl::check(clFinish(queue.get()), "clFinish");
  const auto& k = launch.kernel;
  opencl::ProgramBuild build = opencl::build_program(context.get(), device, runtime.device(),
                                                     std::string(opencl::kernel_source(k.source_file)),
                                                     k.build_options, "");
  if (!build.program) {
    std::fprintf(stderr, "the bare program does not build: %s\n", build.log.c_str());
    return 1;
  }
  opencl::Kernel bare(clCreateKernel(build.program.get(), k.kernel_name.c_str(), &error));
  opencl::check(error, "clCreateKernel");
  const cl_mem arguments[] = {A.get(), B.get(), C.get()};
  for (cl_uint i = 0; i < 3; ++i)
    opencl::check(clSetKernelArg(bare.get(), i, sizeof(cl_mem), &arguments[i]), "clSetKernelArg");

  const int calls = 50;
  std::vector<double> through_runtime, bare_enqueue;
  for (int round = 0; round < rounds; ++round) {
    auto start = Clock::now();
    for (int i = 0; i < calls; ++i) {
      opencl::gemm(runtime, {}, M, N, K, A.get(), B.get(), C.get());
      opencl::check(clFinish(queue.get()), "clFinish");
    }
    through_runtime.push_back(seconds_since(start) / calls);
    start = Clock::now();
    for (int i = 0; i < calls; ++i) {
      opencl::check(clEnqueueNDRangeKernel(queue.get(), bare.get(), static_cast<cl_uint>(k.dimensions), nullptr,
                                           k.global_size.data(), k.local_size.data(), 0, nullptr, nullptr),
                    "clEnqueueNDRangeKernel");
      opencl::check(clFinish(queue.get()), "clFinish");
    }
    bare_enqueue.push_back(seconds_since(start) / calls);
  }

  std::printf("device %s, gemm %ldx%ldx%ld, default config, %d rounds\n  %s\n", runtime.device().name.c_str(), M, N,
              K, rounds, k.build_options.c_str());
  std::printf("program: compile %.1f ms, disk-cache load %.1f ms (compile / load %.1fx)\n", median(compile) * 1e3,
              median(load) * 1e3, median(compile) / median(load));
  std::printf("call + finish: runtime %.1f us, bare enqueue %.1f us (runtime / bare %.3fx, +%.1f us)\n",
              median(through_runtime) * 1e6, median(bare_enqueue) * 1e6,
              median(through_runtime) / median(bare_enqueue),
              (median(through_runtime) - median(bare_enqueue)) * 1e6);
  return 0;
}
