#include "optune/kernels/opencl/program_cache.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <unistd.h>

namespace optune::opencl {
namespace fs = std::filesystem;
namespace {

std::uint64_t fnv1a64(const std::string& bytes, std::uint64_t hash) {
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// 128 bits from two FNV-1a passes with different offsets: a file name, not a security boundary
// (the .key file is compared in full).
std::string cache_name(const std::string& key) {
  char name[33];
  std::snprintf(name, sizeof name, "%016llx%016llx",
                static_cast<unsigned long long>(fnv1a64(key, 0xcbf29ce484222325ull)),
                static_cast<unsigned long long>(fnv1a64(key, 0x84222325cbf29ce4ull)));
  return name;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Written under a unique temporary name, then renamed: concurrent workers never see half a file.
void write_file_atomically(const fs::path& path, const std::string& bytes) {
  const fs::path temporary = path.string() + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return;
  }
  std::error_code ignored;
  fs::rename(temporary, path, ignored);
  if (ignored) fs::remove(temporary, ignored);
}

std::string build_log(cl_program program, cl_device_id device) {
  std::size_t size = 0;
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  if (size) clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  return log.c_str();
}

std::string program_binary(cl_program program) {
  std::size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || !size)
    return "";
  std::string binary(size, '\0');
  unsigned char* pointer = reinterpret_cast<unsigned char*>(binary.data());
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof pointer, &pointer, nullptr) != CL_SUCCESS) return "";
  return binary;
}

Program from_binary(cl_context context, cl_device_id device, const std::string& binary, const std::string& options) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
  const std::size_t size = binary.size();
  cl_int status = CL_SUCCESS, error = CL_SUCCESS;
  Program program(clCreateProgramWithBinary(context, 1, &device, &size, &bytes, &status, &error));
  if (error != CL_SUCCESS || status != CL_SUCCESS) return Program();
  if (clBuildProgram(program.get(), 1, &device, options.c_str(), nullptr, nullptr) != CL_SUCCESS) return Program();
  return program;
}

// PoCL keeps its own cache of what it compiles (POCL_KERNEL_CACHE, on unless 0), the work-group
// functions of a kernel's first launch included, and asking it for a program's binary makes it
// compile the kernels once more for that (0.17-0.22 s a program of conv2d.cl on a 2-core Xeon, as
// long as the build itself, against 0.025 s for a build its cache answers). There this cache
// would cost a second compile of every candidate and save nothing.
bool caches_its_own_builds(const kernels::DeviceInfo& device) {
  if (device.platform != "Portable Computing Language") return false;
  const char* setting = std::getenv("POCL_KERNEL_CACHE");
  return setting == nullptr || std::string(setting) != "0";
}

}  // namespace

ProgramBuild build_program(cl_context context, cl_device_id device, const kernels::DeviceInfo& device_info,
                           const std::string& source, const std::string& options, const std::string& cache_dir) {
  const auto start = std::chrono::steady_clock::now();
  ProgramBuild result;
  auto finish = [&]() -> ProgramBuild {
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(result);
  };
  const std::string cache = caches_its_own_builds(device_info) ? std::string() : cache_dir;
  const std::string key = "optune-opencl-program-1\nplatform " + device_info.platform + "\ndevice " +
                          device_info.name + "\ndriver " + device_info.driver_version + "\noptions " + options +
                          "\nsource\n" + source;
  const fs::path stem = cache.empty() ? fs::path() : fs::path(cache) / cache_name(key);
  if (!cache.empty() && read_file(stem.string() + ".key") == key) {
    result.program = from_binary(context, device, read_file(stem.string() + ".bin"), options);
    if (result.program) {
      result.from_cache = true;
      return finish();
    }
  }

  const char* text = source.c_str();
  cl_int error = CL_SUCCESS;
  Program program(clCreateProgramWithSource(context, 1, &text, nullptr, &error));
  check(error, "clCreateProgramWithSource");
  error = clBuildProgram(program.get(), 1, &device, options.c_str(), nullptr, nullptr);
  if (error != CL_SUCCESS) {
    result.log = error_name(error) + "\n" + build_log(program.get(), device);
    return finish();
  }
  result.program = std::move(program);
  if (!cache.empty()) {
    std::error_code ignored;
    fs::create_directories(cache, ignored);
    const std::string binary = program_binary(result.program.get());
    if (!binary.empty()) {
      write_file_atomically(stem.string() + ".bin", binary);
      write_file_atomically(stem.string() + ".key", key);  // last: the entry is complete once it exists
    }
  }
  return finish();
}

}  // namespace optune::opencl
