// CLBlast's SGEMM (row-major, no transposes) at square sizes on the first OpenCL GPU, timed by
// wall clock over batches of calls: the OpenCL peer of optune's tuned gemm.opencl in
// tests/bench/opencl_gpu_bench.sh. CLBlast uses its own per-device tuned parameters (or its
// defaults for a device its database lacks). Prints the median over repeats, and TFLOP/s.
// Build: c++ -O2 clblast_sgemm.cpp -I<clblast include> -lclblast -lOpenCL
#include "opencl_bench_device.hpp"  // CL/cl.h, OpenCL 1.2
#include <clblast_c.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  cl_device_id device = first_opencl_device(false);
  if (!device) {
    std::fprintf(stderr, "clblast_sgemm: no OpenCL GPU\n");
    return 1;
  }
  char name[256] = {};
  clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, nullptr);
  cl_int error = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &error);
  cl_command_queue queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &error);
  for (int i = 1; i < argc; ++i) {
    const size_t n = std::strtoul(argv[i], nullptr, 10);
    std::vector<float> host(n * n);
    for (auto& x : host) x = static_cast<float>(std::rand()) / RAND_MAX * 2 - 1;
    cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * n * 4, host.data(), &error);
    cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * n * 4, host.data(), &error);
    cl_mem c = clCreateBuffer(context, CL_MEM_READ_WRITE, n * n * 4, nullptr, &error);
    // Wall clock around batches of calls: CLBlast may run several kernels per call (padding,
    // copies), and its returned event covers only the last one.
    auto call = [&] {
      CLBlastStatusCode status = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n,
                                              1.0f, a, 0, n, b, 0, n, 0.0f, c, 0, n, &queue, nullptr);
      if (status != CLBlastSuccess) {
        std::fprintf(stderr, "clblast_sgemm: CLBlastSgemm failed with status %d\n", status);
        std::exit(1);
      }
    };
    for (int run = 0; run < 3; ++run) call();  // the first call compiles CLBlast's kernels
    clFinish(queue);
    std::vector<double> costs;
    for (int repeat = 0; repeat < 11; ++repeat) {
      const auto start = std::chrono::steady_clock::now();
      for (int run = 0; run < 10; ++run) call();
      clFinish(queue);
      costs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / 10);
    }
    std::sort(costs.begin(), costs.end());
    const double ms = costs[costs.size() / 2];
    std::printf("clblast gemm.f32.M%zu.N%zu.K%zu  %.4f ms  %.2f TFLOP/s  (%s)\n", n, n, n, ms,
                2.0 * n * n * n / ms / 1e9, name);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
  }
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
