// The OpenCL kernels as an application calls them (build-time consumption on OpenCL). The header
// `optune apply-best --target opencl` writes holds, per tuned workload, a TunedKernel row: the
// tuned config as the -D build options of the template's .cl file and the launch geometry it
// needs. A Runtime, made from the application's command queue, runs a workload through such a
// table: the row of the workload when the table is for this device, else the template's default
// config for the workload and the device (what `optune tune` reports as the default). Programs
// are compiled from the .cl sources compiled into this library, with the on-disk binary cache, and
// kept built for the Runtime's lifetime. The generated header wraps this in optune::gemm(runtime,
// ...), optune::conv2d(...) and optune::depthwise_conv2d(...).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/opencl/cl_api.hpp"
#include "optune/kernels/opencl/opencl_template.hpp"
#include "optune/kernels/workload.hpp"

namespace optune::opencl {

// One row of a generated table: how the workload's tuned kernel is built and launched (an
// OpenCLKernel in constexpr form).
struct TunedKernel {
  std::string_view workload_key;   // "gemm.f32.M512.N512.K512"
  std::string_view source_file;    // "gemm.cl"
  std::string_view kernel_name;    // "optune_gemm"
  std::string_view build_options;  // "-DM=512 ... -DMWG=64 ..."
  int dimensions = 1;
  std::array<std::size_t, 3> global_size{1, 1, 1};
  std::array<std::size_t, 3> local_size{1, 1, 1};
  std::size_t scratch_bytes = 0;  // OpenCLKernel::scratch_bytes
};

// The rows of one template, tuned on the device named `device` (CL_DEVICE_NAME).
struct TunedTable {
  std::string_view device;
  std::span<const TunedKernel> rows;
};

// Where a launched kernel's program came from.
enum class ProgramSource {
  kBuilt,      // compiled from source now (and stored in the disk cache, if there is one)
  kDiskCache,  // loaded from the disk cache's binary: no compile
  kMemory,     // built earlier by this Runtime
};

// What a call ran: whether the workload's tuned row did (else the default config), and the
// program's build options and launch, for applications and tests that want to know.
struct Launch {
  bool tuned = false;
  kernels::OpenCLKernel kernel;
  ProgramSource program = ProgramSource::kBuilt;
};

struct RuntimeOptions {
  // The on-disk program cache; "" compiles every program once per Runtime. Given the folder
  // `optune tune` uses (its --help names it), the application loads the very binaries the tuner built, when device and driver match.
  std::string cache_dir;
};

class Runtime {
 public:
  // Runs kernels on `queue` (retained), its context and device.
  explicit Runtime(cl_command_queue queue, RuntimeOptions options = {});

  // Enqueues the workload's kernel on the queue (no wait: finish the queue or wait on a later
  // command): `inputs` in reference.hpp's order (GEMM: A, B; conv: input, filter), then `output`,
  // buffers of at least the workload's operands in their types (operator_operands: f32, f16 or
  // bf16 throughout; i8: s8 inputs, an int32 output). Throws std::invalid_argument for a bad shape
  // or too small a buffer, std::runtime_error when the program does not build, opencl::Error when
  // the OpenCL API fails.
  Launch run(const kernels::Workload& workload, const TunedTable& table, std::span<const cl_mem> inputs,
             cl_mem output);

  // The kernel run() would launch for the workload, without running it.
  kernels::OpenCLKernel plan(const kernels::Workload& workload, const TunedTable& table, bool* tuned = nullptr) const;

  const kernels::DeviceInfo& device() const { return device_; }

 private:
  struct Built {
    Program program;
    Kernel kernel;
    Buffer scratch;  // OpenCLKernel::scratch_bytes, zero-filled when built
    Event last_launch;  // with a scratch, each launch waits on the one before (out-of-order queues)
  };
  kernels::OpenCLKernel plan_locked(const kernels::Workload& workload, const TunedTable& table, bool* tuned) const;
  Built& program_for(const kernels::OpenCLKernel& kernel, ProgramSource& source);
  void check_buffer(cl_mem buffer, std::size_t needed_bytes, const kernels::Workload& workload,
                    const std::string& role) const;

  Queue queue_;
  cl_context context_ = nullptr;  // the queue's, alive as long as the queue is
  cl_device_id device_id_ = nullptr;
  kernels::DeviceInfo device_;
  RuntimeOptions options_;
  mutable std::mutex mutex_;  // kernels' arguments are per kernel object: one launch at a time
  std::map<std::string, Built> programs_;  // by source file and build options
  // The default config's kernel by workload key: choosing it walks the template's space.
  mutable std::map<std::string, kernels::OpenCLKernel> defaults_;
};

// The text of one of kernels/opencl's .cl files ("gemm.cl"), as compiled into this library;
// throws std::invalid_argument for another name.
std::string_view kernel_source(std::string_view file);

// The ops with their natural arguments, in the workload dtype `dtype`. Empty tables run the
// default config.
Launch gemm(Runtime& runtime, const TunedTable& table, std::int64_t M, std::int64_t N, std::int64_t K, cl_mem A,
            cl_mem B, cl_mem C, kernels::DataType dtype = kernels::DataType::kF32);
// NCHW input, OIHW filter [K, C/groups, R, S], NCHW output.
Launch conv2d(Runtime& runtime, const TunedTable& table, const kernels::Conv2dShape& shape, cl_mem input,
              cl_mem filter, cl_mem output, kernels::DataType dtype = kernels::DataType::kF32);
// shape.K and shape.groups are taken as shape.C; filter [C, 1, R, S].
Launch depthwise_conv2d(Runtime& runtime, const TunedTable& table, kernels::Conv2dShape shape, cl_mem input,
                        cl_mem filter, cl_mem output, kernels::DataType dtype = kernels::DataType::kF32);

}  // namespace optune::opencl
