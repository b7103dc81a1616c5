// What the OpenCL driver costs a kernel that does (almost) nothing, on the first OpenCL GPU: the
// floor under every small GEMM's time. Each probe kernel is timed by its profiling events (end -
// start, the span optune's worker reports) over RUNS single launches (clFinish after each), then
// over RUNS launches enqueued back to back (per launch: the events' spans, and the gap from one
// launch's end to the next one's start).
// Probes: an empty kernel on one work-group; a kernel that stores one float; the same on 48
// work-groups of 256 (32 x 768 x 768's grid of 64 x 64 tiles split in 3 along K has 48 groups);
// and one that claims 48 KiB of local memory, as a tensor-core tile's stages do.
// Usage: opencl_launch_floor [RUNS]   (default 200; OPTUNE_FLOOR_ANY_DEVICE=1 takes a CPU device,
// such as PoCL's, where there is no GPU)
// Build: c++ -O2 -std=c++17 opencl_launch_floor.cpp -lOpenCL
#include "opencl_bench_device.hpp"  // CL/cl.h, OpenCL 1.2

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const char* kSource = R"CLC(
__kernel void empty_kernel(__global float* out) {}
__kernel void store_one(__global float* out) {
  if (get_global_id(0) == 0) out[0] = 1.0f;
}
__kernel void local_48k(__global float* out) {
  __local float stage[12288];
  stage[get_local_id(0)] = (float)get_local_id(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_global_id(0) == 0) out[0] = stage[5];
}
)CLC";

struct Probe {
  const char* kernel;
  size_t groups;
  size_t group_size;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

void check(cl_int error, const char* what) {
  if (error == CL_SUCCESS) return;
  std::fprintf(stderr, "opencl_launch_floor: %s failed (%d)\n", what, error);
  std::exit(1);
}

cl_ulong profiling(cl_event event, cl_profiling_info what) {
  cl_ulong value = 0;
  clGetEventProfilingInfo(event, what, sizeof value, &value, nullptr);
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
  cl_device_id device = first_opencl_device(std::getenv("OPTUNE_FLOOR_ANY_DEVICE") != nullptr);
  if (!device) {
    std::fprintf(stderr, "opencl_launch_floor: no OpenCL GPU\n");
    return 1;
  }
  char name[256] = {};
  clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, nullptr);
  cl_int error = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &error);
  check(error, "clCreateContext");
  cl_command_queue queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &error);
  check(error, "clCreateCommandQueue");
  cl_program program = clCreateProgramWithSource(context, 1, &kSource, nullptr, &error);
  check(error, "clCreateProgramWithSource");
  check(clBuildProgram(program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, nullptr, &error);
  check(error, "clCreateBuffer");

  std::printf("device: %s; %d launches per probe; microseconds, medians\n", name, runs);
  std::printf("%-12s %7s %6s | %12s | %14s %12s\n", "kernel", "groups", "size", "single span",
              "back-to-back span", "gap");
  const Probe probes[] = {{"empty_kernel", 1, 32},
                          {"store_one", 1, 32},
                          {"store_one", 48, 256},
                          {"local_48k", 1, 256},
                          {"local_48k", 48, 256}};
  for (const Probe& probe : probes) {
    cl_kernel kernel = clCreateKernel(program, probe.kernel, &error);
    check(error, probe.kernel);
    check(clSetKernelArg(kernel, 0, sizeof out, &out), "clSetKernelArg");
    const size_t global = probe.groups * probe.group_size, local = probe.group_size;
    auto launch = [&](cl_event* event) {
      check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, event),
            "clEnqueueNDRangeKernel");
    };
    for (int i = 0; i < 10; ++i) launch(nullptr);  // warm-up: the first launches pay for loading
    clFinish(queue);
    std::vector<double> single;
    for (int i = 0; i < runs; ++i) {
      cl_event event;
      launch(&event);
      clFinish(queue);
      single.push_back((profiling(event, CL_PROFILING_COMMAND_END) - profiling(event, CL_PROFILING_COMMAND_START)) * 1e-3);
      clReleaseEvent(event);
    }
    std::vector<cl_event> events(runs);
    for (int i = 0; i < runs; ++i) launch(&events[i]);
    clFinish(queue);
    std::vector<double> spans, gaps;
    for (int i = 0; i < runs; ++i) {
      const cl_ulong start = profiling(events[i], CL_PROFILING_COMMAND_START);
      const cl_ulong end = profiling(events[i], CL_PROFILING_COMMAND_END);
      spans.push_back((end - start) * 1e-3);
      if (i > 0) gaps.push_back((double(start) - double(profiling(events[i - 1], CL_PROFILING_COMMAND_END))) * 1e-3);
    }
    for (cl_event event : events) clReleaseEvent(event);
    std::printf("%-12s %7zu %6zu | %12.2f | %14.2f %12.2f\n", probe.kernel, probe.groups, probe.group_size,
                median(single), median(spans), median(gaps));
    clReleaseKernel(kernel);
  }
  clReleaseMemObject(out);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
