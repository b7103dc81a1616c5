// optune-cuda-probe: the end-to-end proof of this layer on a GPU machine. It lists the devices,
// compiles (NVRTC, in process) a vector_add and a templated shared-memory matmul for the device's
// architecture, loads them, launches them (one case with more than 48 KiB of dynamic shared
// memory), times them with CUDA events, checks them against the CPU, and finally launches a
// kernel that writes through an invalid pointer, reporting the sticky error it raises.
//
//   optune-cuda-probe [--device N] [--repeats N] [--n N]
//
// Prints one JSON object on stdout. Exit status: 0 every check passed, 1 a check or a CUDA call
// failed (the JSON says which), 2 no usable driver, device or NVRTC (one line on stderr).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compile.hpp"
#include "devices.hpp"
#include "driver_api.hpp"
#include "driver_handles.hpp"
#include "nvrtc_api.hpp"
#include "probe_kernels.hpp"

namespace {

using namespace optune::backends::cuda;
using nlohmann::json;

struct Options {
  int device = 0;
  int repeats = 20;
  int n = 512;  // matmul size; a multiple of 256 (the deepest stage)
};

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + flag);
    const int value = std::stoi(argv[++i]);
    if (flag == "--device") options.device = value;
    else if (flag == "--repeats") options.repeats = std::max(1, value);
    else if (flag == "--n") options.n = value;
    else throw std::invalid_argument("unknown option " + flag);
  }
  if (options.n <= 0 || options.n % 256 != 0) throw std::invalid_argument("--n must be a positive multiple of 256");
  return options;
}

struct Launch {
  CUfunction function = nullptr;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
  std::vector<void*> parameters;
};

void launch(const Launch& l, CUstream stream) {
  check(DriverApi::get().cuLaunchKernel(l.function, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
                                        l.block[2], l.shared_bytes, stream,
                                        const_cast<void**>(l.parameters.data()), nullptr),
        "cuLaunchKernel");
}

// Milliseconds, the median of `repeats` launches each timed by its own pair of events, after one
// untimed launch (module load, first-touch costs).
double median_milliseconds(const Launch& l, CUstream stream, int repeats) {
  const DriverApi& api = DriverApi::get();
  launch(l, stream);
  check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
  Event start = create_event();
  Event end = create_event();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    check(api.cuEventRecord(start.get(), stream), "cuEventRecord");
    launch(l, stream);
    check(api.cuEventRecord(end.get(), stream), "cuEventRecord");
    check(api.cuEventSynchronize(end.get()), "cuEventSynchronize");
    float milliseconds = 0;
    check(api.cuEventElapsedTime(&milliseconds, start.get(), end.get()), "cuEventElapsedTime");
    times.push_back(milliseconds);
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

template <typename T>
std::vector<T> random_values(std::size_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<T> values(count);
  for (T& v : values) v = static_cast<T>(uniform(generator));
  return values;
}

template <typename T>
DeviceMemory upload(const std::vector<T>& values) {
  DeviceMemory memory = allocate(values.size() * sizeof(T));
  check(DriverApi::get().cuMemcpyHtoD(memory.get(), values.data(), values.size() * sizeof(T)), "cuMemcpyHtoD");
  return memory;
}

template <typename T>
std::vector<T> download(const DeviceMemory& memory, std::size_t count) {
  std::vector<T> values(count);
  check(DriverApi::get().cuMemcpyDtoH(values.data(), memory.get(), count * sizeof(T)), "cuMemcpyDtoH");
  return values;
}

CUfunction function(const Module& module, const CompileResult& compiled, const std::string& expression) {
  CUfunction f = nullptr;
  check(DriverApi::get().cuModuleGetFunction(&f, module.get(), compiled.lowered_names.at(expression).c_str()),
        "cuModuleGetFunction");
  return f;
}

json check_vector_add(const Module& module, const CompileResult& compiled, CUstream stream, int repeats) {
  int n = 1 << 24;
  const auto a = random_values<float>(n, 1), b = random_values<float>(n, 2);
  DeviceMemory da = upload(a), db = upload(b), dc = allocate(n * sizeof(float));
  check(DriverApi::get().cuMemsetD8(dc.get(), 0xff, n * sizeof(float)), "cuMemsetD8");  // NaNs until written
  CUdeviceptr pa = da.get(), pb = db.get(), pc = dc.get();
  Launch l{function(module, compiled, "&vector_add"), {unsigned((n + 255) / 256), 1, 1}, {256, 1, 1}, 0,
           {&pa, &pb, &pc, &n}};
  const double milliseconds = median_milliseconds(l, stream, repeats);
  check(DriverApi::get().cuStreamSynchronize(stream), "cuStreamSynchronize");
  const auto c = download<float>(dc, n);
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += c[i] != a[i] + b[i];  // one rounding, the same on both sides
  return {{"name", "vector_add"}, {"n", n}, {"ok", wrong == 0}, {"wrong", wrong},
          {"median_ms", milliseconds}, {"gb_per_s", 3.0 * n * sizeof(float) / (milliseconds * 1e6)}};
}

template <typename T>
json check_matmul(const Module& module, const CompileResult& compiled, const std::string& expression, int tile,
                  int stage_tiles, int n, CUstream stream, int repeats) {
  const auto a = random_values<T>(std::size_t(n) * n, 3), b = random_values<T>(std::size_t(n) * n, 4);
  DeviceMemory da = upload(a), db = upload(b), dc = allocate(std::size_t(n) * n * sizeof(T));
  CUdeviceptr pa = da.get(), pb = db.get(), pc = dc.get();
  const unsigned shared_bytes = 2u * tile * tile * stage_tiles * sizeof(T);
  Launch l{function(module, compiled, expression), {unsigned(n / tile), unsigned(n / tile), 1},
           {unsigned(tile), unsigned(tile), 1}, shared_bytes, {&pa, &pb, &pc, &n, &stage_tiles}};
  // Past 48 KiB a kernel must opt in to its dynamic shared memory.
  if (shared_bytes > 48 * 1024) {
    check(DriverApi::get().cuFuncSetAttribute(l.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                              int(shared_bytes)),
          "cuFuncSetAttribute");
  }
  const double milliseconds = median_milliseconds(l, stream, repeats);
  check(DriverApi::get().cuStreamSynchronize(stream), "cuStreamSynchronize");
  const auto c = download<T>(dc, std::size_t(n) * n);
  // Error bound: a few units of T's rounding per term of the sum, relative to the sum of |terms|.
  const double tolerance = 4.0 * n * std::numeric_limits<T>::epsilon();
  double worst = 0;  // the largest error as a fraction of its bound
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0;
      for (int k = 0; k < n; ++k) {
        const double term = double(a[i * n + k]) * double(b[k * n + j]);
        sum += term;
        magnitude += std::abs(term);
      }
      worst = std::max(worst, std::abs(double(c[i * n + j]) - sum) / (tolerance * magnitude + 1e-30));
    }
  }
  return {{"name", expression}, {"n", n}, {"stage_tiles", stage_tiles}, {"dynamic_shared_bytes", shared_bytes},
          {"ok", worst <= 1.0}, {"error_over_bound", worst}, {"median_ms", milliseconds},
          {"gflops", 2.0 * n * n * double(n) / (milliseconds * 1e6)}};
}

// Writes through an address no allocation covers: the launch fails with a sticky error, after
// which even an allocation fails. The last GPU work of the probe, for that reason.
json provoke_sticky_error(const Module& module, const CompileResult& compiled, CUstream stream) {
  const DriverApi& api = DriverApi::get();
  CUdeviceptr invalid = 0x10;
  Launch l{function(module, compiled, "&write_through"), {1, 1, 1}, {1, 1, 1}, 0, {&invalid}};
  json report;
  try {
    launch(l, stream);
    check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
    report = {{"ok", false}, {"message", "the write through an invalid pointer raised no error"}};
  } catch (const CudaError& error) {
    CUdeviceptr pointer = 0;
    const CUresult later = api.cuMemAlloc(&pointer, 4);
    if (later == CUDA_SUCCESS) api.cuMemFree(pointer);
    const std::string text = error_text(error.code());
    report = {{"code", error.code()}, {"name", text.substr(0, text.find(':'))}, {"message", error.what()},
              {"is_sticky", error.is_sticky()},
              {"later_cuMemAlloc", error_text(later)},
              {"ok", error.is_sticky() && later == error.code()}};
  }
  return report;
}

CompileResult compile_probe(const CudaDeviceInfo& device, const NvrtcApi& nvrtc, json& out) {
  CompileRequest request;
  request.source = kProbeSource;
  request.program_name = "probe.cu";
  request.arch = compile_arch(device.compute_major, device.compute_minor, nvrtc.supported_archs());
  request.name_expressions = kProbeNameExpressions;
  CompileResult compiled = compile_cuda(request);
  out["nvrtc"] = {{"library", nvrtc.library}, {"version", fmt::format("{}.{}", nvrtc.major, nvrtc.minor)},
                  {"supported_archs", nvrtc.supported_archs()}};
  out["compile"] = {{"arch", request.arch}, {"ok", compiled.ok}, {"is_ptx", compiled.is_ptx},
                    {"seconds", compiled.seconds}, {"binary_bytes", compiled.binary.size()},
                    {"lowered_names", compiled.lowered_names}, {"log", compiled.log}};
  return compiled;
}

// The launches, in one primary context; true when every check passed. The sticky error comes
// last: nothing works in this process after it.
bool run_checks(const Options& options, const CompileResult& compiled, json& out) {
  CUdevice device = 0;
  check(DriverApi::get().cuDeviceGet(&device, options.device), "cuDeviceGet");
  PrimaryContext context(device);
  Stream owned_stream = create_stream();
  const CUstream stream = owned_stream.get();
  Module module = load_module(compiled.binary.data());
  const int n = options.n, repeats = options.repeats;
  json checks = json::array();
  checks.push_back(check_vector_add(module, compiled, stream, repeats));
  checks.push_back(check_matmul<float>(module, compiled, "&matmul<float, 16>", 16, 1, n, stream, repeats));
  checks.push_back(check_matmul<float>(module, compiled, "&matmul<float, 32>", 32, 8, n, stream, repeats));
  checks.push_back(check_matmul<double>(module, compiled, "&matmul<double, 16>", 16, 2, n, stream, repeats));
  out["checks"] = checks;
  out["sticky_error"] = provoke_sticky_error(module, compiled, stream);
  bool ok = out["sticky_error"]["ok"].get<bool>();
  for (const json& c : checks) ok = ok && c["ok"].get<bool>();
  return ok;
}

int run(const Options& options) {
  const DriverApi& driver = DriverApi::get();
  if (!driver.is_available()) {
    std::cerr << "optune-cuda-probe: " << driver.missing << "\n";
    return 2;
  }
  json out{{"driver_library", driver.library}, {"ok", false}};
  const std::vector<CudaDeviceInfo> devices = list_cuda_devices();
  out["devices"] = devices;
  const NvrtcApi& nvrtc = NvrtcApi::get();
  std::string unusable;
  if (options.device < 0 || options.device >= int(devices.size())) {
    unusable = fmt::format("no CUDA device {} ({} found)", options.device, devices.size());
  } else if (!nvrtc.is_available()) {
    unusable = nvrtc.missing;
  }
  if (!unusable.empty()) {
    std::cout << out.dump(2) << "\n";
    std::cerr << "optune-cuda-probe: " << unusable << "\n";
    return 2;
  }
  const CompileResult compiled = compile_probe(devices[options.device], nvrtc, out);
  if (compiled.ok) {
    try {
      out["ok"] = run_checks(options, compiled, out);
    } catch (const CudaError& error) {
      out["error"] = {{"message", error.what()}, {"code", error.code()}, {"is_sticky", error.is_sticky()}};
    }
  }
  std::cout << out.dump(2) << "\n";
  return out["ok"].get<bool>() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_options(argc, argv));
  } catch (const std::exception& error) {
    std::cerr << "optune-cuda-probe: " << error.what() << "\n";
    return 2;
  }
}
