// Hand-picked configs of kernels/opencl/gemm.cl timed on the first OpenCL GPU, without the tuner:
// a quick way to see what a kernel change is worth before a full `optune tune` run. Each config
// is compiled with the same -D options the gemm.opencl template gives, run on random inputs in
// [-1, 1], checked on 512 sampled outputs against a double-precision dot product, and timed with
// profiling events (median of 20 runs after 3 warm-ups; OPTUNE_SWEEP_RUNS sets the count).
// Usage: opencl_gemm_sweep GEMM_CL M N K < configs
//   one config a line: MWG NWG KWG MDIMC NDIMC VWM VWN SA SB STRM STRN KWI DB [WLAY [GSW [SPLITK]]]
//   (absent trailing knobs: WLAY 0, GSW 1, SPLITK 1), or for the tensor-core kernel (gemm_mma.cl
//   beside GEMM_CL, NVIDIA only): mma MWG NWG KWG WM WN STAGES [LDSM [GSW [SPLITK]]]
//   With SPLITK > 1 the kernel gets a zero-filled scratch buffer (split_k.cl) as its fourth
//   argument, as optune's worker gives it.
// With OPTUNE_SWEEP_VERBOSE set, the device's local memory size and (NVIDIA) compute capability
// are printed first and NVIDIA's register and spill report follows each config.
// OPTUNE_SWEEP_DEFINES adds build options to every config (an experimental kernel's own defines);
// OPTUNE_SWEEP_PTX=DIR writes each config's program binary (PTX on NVIDIA) to DIR/config_<line>.ptx.
// OPTUNE_SWEEP_B2B=N also times N calls back to back, fed by the host and then queued behind a
// user event: per call the events' own spans, first start to last end, and host time.
// OPTUNE_SWEEP_IO=DIR reads A and B from DIR/a.bin and DIR/b.bin (raw float32, row-major) instead
// of drawing them, and writes each config's C to DIR/c_<line>.bin (for an error measured against
// another library's on the same inputs).
// Build: c++ -O2 -std=c++17 opencl_gemm_sweep.cpp -lOpenCL
#include "opencl_bench_device.hpp"  // CL/cl.h, OpenCL 1.2

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <utility>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: opencl_gemm_sweep GEMM_CL M N K < configs\n");
    return 2;
  }
  auto read_text = [](const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  };
  const std::string gemm_path = argv[1];
  const std::string source = read_text(gemm_path);
  const std::string kernel_dir = gemm_path.substr(0, gemm_path.rfind('/') + 1);  // for split_k.cl
  const std::string mma_source = read_text(kernel_dir + "gemm_mma.cl");
  const long M = std::atol(argv[2]), N = std::atol(argv[3]), K = std::atol(argv[4]);

  cl_device_id device = first_opencl_device(true);
  if (!device) {
    std::fprintf(stderr, "opencl_gemm_sweep: no OpenCL device\n");
    return 1;
  }
  const bool verbose = std::getenv("OPTUNE_SWEEP_VERBOSE") != nullptr;
  cl_uint cc_major = 0, cc_minor = 0;  // cl_nv_device_attribute_query; stay 0 elsewhere
  clGetDeviceInfo(device, 0x4000, sizeof cc_major, &cc_major, nullptr);
  clGetDeviceInfo(device, 0x4001, sizeof cc_minor, &cc_minor, nullptr);
  if (verbose) {
    char name[256] = {};
    cl_ulong local_bytes = 0;
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
    clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local_bytes, &local_bytes, nullptr);
    std::printf("device %s, local memory %llu bytes, compute capability %u.%u\n", name,
                static_cast<unsigned long long>(local_bytes), cc_major, cc_minor);
  }
  const char* extra_defines = std::getenv("OPTUNE_SWEEP_DEFINES");
  const char* ptx_dir = std::getenv("OPTUNE_SWEEP_PTX");
  // Timed launches per config (after 3 warm-ups): more keep the GPU busy long enough to sample
  // its clocks and power while the kernel runs.
  const int runs = std::getenv("OPTUNE_SWEEP_RUNS") ? std::atoi(std::getenv("OPTUNE_SWEEP_RUNS")) : 20;
  cl_int error = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &error);
  cl_command_queue queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &error);

  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> a(M * K), b(K * N), c(M * N);
  for (auto& x : a) x = uniform(rng);
  for (auto& x : b) x = uniform(rng);
  const char* io_dir = std::getenv("OPTUNE_SWEEP_IO");
  if (io_dir) {
    for (auto [name, data] : {std::pair{"/a.bin", &a}, std::pair{"/b.bin", &b}}) {
      std::ifstream in(std::string(io_dir) + name, std::ios::binary);
      if (!in.read(reinterpret_cast<char*>(data->data()), std::streamsize(data->size() * 4))) {
        std::fprintf(stderr, "opencl_gemm_sweep: cannot read %s%s\n", io_dir, name);
        return 1;
      }
    }
  }
  cl_mem da = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, a.size() * 4, a.data(), &error);
  cl_mem db = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, b.size() * 4, b.data(), &error);
  cl_mem dc = clCreateBuffer(context, CL_MEM_READ_WRITE, c.size() * 4, nullptr, &error);
  std::vector<std::pair<long, long>> samples;
  for (int s = 0; s < 512; ++s) samples.push_back({long(rng() % M), long(rng() % N)});
  samples.push_back({M - 1, N - 1});

  std::string line;
  for (int line_number = 1; std::getline(std::cin, line); ++line_number) {
    std::istringstream in(line);
    std::ostringstream options;
    options << "-DM=" << M << " -DN=" << N << " -DK=" << K;
    std::string kernel_name = "optune_gemm";
    size_t local[3] = {1, 1, 1}, global[3] = {1, 1, 1};
    long splitk = 1, tile_m = 0, tile_n = 0;
    bool mma = line.rfind("mma", 0) == 0;
    if (mma) {
      std::string tag;
      long bm, bn, bk, wm, wn, stages, ldsm = 0, gsw = 1;
      if (!(in >> tag >> bm >> bn >> bk >> wm >> wn >> stages)) continue;
      in >> ldsm >> gsw >> splitk;
      options << " -DMWG=" << bm << " -DNWG=" << bn << " -DKWG=" << bk << " -DWM=" << wm << " -DWN=" << wn
              << " -DSTAGES=" << stages << " -DLDSM=" << ldsm << " -DGSW=" << gsw << " -DEDGE_M=" << (M % bm != 0)
              << " -DEDGE_N=" << (N % bn != 0) << " -DEDGE_K=" << (K % bk != 0)
              << " -DA_ROWS16=" << (K % 4 == 0) << " -DB_ROWS16=" << (N % 4 == 0);
      kernel_name = "optune_gemm_mma";
      tile_m = bm, tile_n = bn;
      const long threads = (bm / wm) * (bn / wn) * 32;
      local[0] = size_t(threads), local[1] = 1;
      global[0] = size_t((N + bn - 1) / bn * threads), global[1] = size_t((M + bm - 1) / bm);
    } else {
      long mwg, nwg, kwg, mdimc, ndimc, vwm, vwn, sa, sb, strm, strn, kwi, dbuf;
      if (!(in >> mwg >> nwg >> kwg >> mdimc >> ndimc >> vwm >> vwn >> sa >> sb >> strm >> strn >> kwi >> dbuf)) continue;
      long wlay = 0, gsw = 1;
      in >> wlay >> gsw >> splitk;
      options << " -DMWG=" << mwg << " -DNWG=" << nwg << " -DKWG=" << kwg << " -DMDIMC=" << mdimc
              << " -DNDIMC=" << ndimc << " -DVWM=" << vwm << " -DVWN=" << vwn << " -DSA=" << sa << " -DSB=" << sb
              << " -DSTRM=" << strm << " -DSTRN=" << strn << " -DKWI=" << kwi << " -DDB=" << dbuf
              << " -DWLAY=" << wlay << " -DGSW=" << gsw << " -DEDGE_M=" << (M % mwg != 0)
              << " -DEDGE_N=" << (N % nwg != 0) << " -DEDGE_K=" << (K % kwg != 0);
      local[0] = size_t(ndimc), local[1] = size_t(mdimc);
      tile_m = mwg, tile_n = nwg;
      global[0] = size_t((N + nwg - 1) / nwg * ndimc), global[1] = size_t((M + mwg - 1) / mwg * mdimc);
    }
    splitk = std::max(1L, splitk);
    if (splitk > 1) options << " -DSPLITK=" << splitk << (cc_major >= 7 ? " -DSPLIT_ACQREL=1" : "");  // as the template
    global[2] = size_t(splitk);
    options << " -I" << kernel_dir << " -cl-mad-enable -w" << (verbose ? " -cl-nv-verbose" : "") << (extra_defines ? " " : "")
            << (extra_defines ? extra_defines : "");
    const char* src = mma ? mma_source.c_str() : source.c_str();
    cl_program program = clCreateProgramWithSource(context, 1, &src, nullptr, &error);
    if (clBuildProgram(program, 1, &device, options.str().c_str(), nullptr, nullptr) != CL_SUCCESS) {
      size_t size = 0;
      clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      std::printf("%-40s build error: %.300s\n", line.c_str(), log.c_str());
      clReleaseProgram(program);
      continue;
    }
    if (verbose) {
      size_t size = 0;
      clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      std::istringstream lines(log);
      for (std::string l; std::getline(lines, l);)
        if (l.find("registers") != std::string::npos || l.find("spill") != std::string::npos)
          std::printf("   %s\n", l.c_str());
    }
    if (ptx_dir) {
      size_t size = 0;
      clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
      std::string binary(size, '\0');
      unsigned char* data = reinterpret_cast<unsigned char*>(binary.data());
      clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof data, &data, nullptr);
      while (!binary.empty() && binary.back() == '\0') binary.pop_back();  // NVIDIA's PTX ends in a NUL
      std::ofstream(std::string(ptx_dir) + "/config_" + std::to_string(line_number) + ".ptx") << binary;
    }
    cl_kernel kernel = clCreateKernel(program, kernel_name.c_str(), &error);
    clSetKernelArg(kernel, 0, sizeof(cl_mem), &da);
    clSetKernelArg(kernel, 1, sizeof(cl_mem), &db);
    clSetKernelArg(kernel, 2, sizeof(cl_mem), &dc);
    const cl_uint dims = splitk > 1 ? 3 : 2;
    // Split-K's scratch (the gemm.opencl template's size): a counter per work-item of every tile,
    // padded to 4, and every split's partial tile.
    cl_mem scratch = nullptr;
    if (splitk > 1) {
      const size_t tiles = global[0] / local[0] * (global[1] / local[1]), items = local[0] * local[1];
      const size_t bytes = 4 * ((tiles * items + 3) / 4 * 4 + tiles * size_t(splitk * tile_m * tile_n));
      scratch = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &error);
      const cl_uint zero = 0;
      clEnqueueFillBuffer(queue, scratch, &zero, 4, 0, bytes, 0, nullptr, nullptr);
      clSetKernelArg(kernel, 3, sizeof(cl_mem), &scratch);
    }
    auto launch = [&](cl_event* event, cl_event after = nullptr) {
      return clEnqueueNDRangeKernel(queue, kernel, dims, nullptr, global, local, after ? 1 : 0,
                                    after ? &after : nullptr, event);
    };
    auto span_ns = [](cl_event event) {  // the event's profiled start and end
      cl_ulong start = 0, end = 0;
      clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
      clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
      return std::pair{start, end};
    };
    const float poison = NAN;
    clEnqueueFillBuffer(queue, dc, &poison, 4, 0, c.size() * 4, 0, nullptr, nullptr);
    error = launch(nullptr);
    clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, c.size() * 4, c.data(), 0, nullptr, nullptr);
    if (io_dir) {
      std::ofstream out(std::string(io_dir) + "/c_" + std::to_string(line_number) + ".bin", std::ios::binary);
      out.write(reinterpret_cast<const char*>(c.data()), std::streamsize(c.size() * 4));
    }
    double worst = 0;
    for (auto [m, n] : samples) {
      double ref = 0, norm = 0;
      for (long k = 0; k < K; ++k) {
        ref += double(a[m * K + k]) * b[k * N + n];
        norm += std::fabs(double(a[m * K + k]) * b[k * N + n]);
      }
      const double err = std::fabs(c[m * N + n] - ref) / std::max(norm, 1e-30);
      worst = std::isnan(c[m * N + n]) ? 1e30 : std::max(worst, err);
    }
    std::vector<double> ms;
    for (int run = 0; run < runs + 3 && error == CL_SUCCESS; ++run) {
      cl_event event;
      launch(&event);
      clWaitForEvents(1, &event);
      const auto [start, end] = span_ns(event);
      clReleaseEvent(event);
      if (run >= 3) ms.push_back((end - start) * 1e-6);
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms.empty() ? 0 : ms[ms.size() / 2];
    if (const char* b2b = std::getenv("OPTUNE_SWEEP_B2B"); b2b && error == CL_SUCCESS) {
      // Back-to-back calls: the sum of the events' own spans (what the worker times) against first
      // start to last end (gaps included, as a CUDA graph's replay is timed) and host time; fed by
      // the host as it enqueues, then queued behind a user event first, so that the GPU finds them
      // all waiting when it is released (no host in between, as in a graph).
      const int calls = std::max(1, std::atoi(b2b));
      for (const bool gated : {false, true}) {
        std::vector<cl_event> events(calls);
        clFinish(queue);
        cl_event gate = gated ? clCreateUserEvent(context, nullptr) : nullptr;
        const auto host_start = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) launch(&events[i], i == 0 ? gate : nullptr);
        if (gate) clSetUserEventStatus(gate, CL_COMPLETE);
        clFinish(queue);
        const double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_start).count();
        if (gate) clReleaseEvent(gate);
        double sum_ms = 0;
        cl_ulong first = 0, last = 0;
        for (int i = 0; i < calls; ++i) {
          const auto [start, end] = span_ns(events[i]);
          sum_ms += (end - start) * 1e-6;
          if (i == 0) first = start;
          if (i == calls - 1) last = end;
          clReleaseEvent(events[i]);
        }
        std::printf("  %s x%d: events %.4f ms, first start to last end %.4f ms, host %.4f ms per call\n",
                    gated ? "queued behind a gate" : "back to back", calls, sum_ms / calls, (last - first) * 1e-6 / calls,
                    host_ms / calls);
      }
    }
    std::printf("%-40s %s %8.4f ms %7.2f TFLOP/s  err %.1e\n", line.c_str(),
                error != CL_SUCCESS ? "launch-error" : worst < 1e-5 ? "ok   " : "WRONG", median,
                median > 0 ? 2.0 * M * N * K / (median * 1e9) : 0.0, worst);
    std::fflush(stdout);
    if (scratch) clReleaseMemObject(scratch);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
  }
  return 0;
}
