#include "worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "cuda_device.hpp"
#include "driver_api.hpp"
#include "optune/backends/cuda/backend.hpp"
#include "tensor_map.hpp"

namespace optune::backends::cuda {
namespace {

using Clock = std::chrono::steady_clock;

// Without opting in, a block may have 48 KiB of dynamic shared memory.
constexpr std::int64_t kDefaultSharedMemoryBytes = 48 * 1024;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Host -> device for every buffer, guards included; seconds and bytes added to `transfers`.
void upload(const measure::KernelOperands& operands, const std::vector<DeviceMemory>& buffers,
            measure::Transfers& transfers) {
  const DriverApi& api = DriverApi::get();
  const auto start = Clock::now();
  for (std::size_t i = 0; i < operands.args.size(); ++i) {
    const measure::HostArgument& arg = operands.args[i];
    if (!arg.spec.is_buffer) continue;
    check(api.cuMemcpyHtoD(buffers[i].get(), arg.bytes.data(), arg.bytes.size()), "cuMemcpyHtoD");
    transfers.write_bytes += double(arg.bytes.size());
  }
  transfers.write_seconds += seconds_since(start);
}

// Device -> host for every output buffer, guards included; `transfers`' reads are these copies.
void download_outputs(measure::KernelOperands& operands, const std::vector<DeviceMemory>& buffers,
                      measure::Transfers& transfers) {
  const DriverApi& api = DriverApi::get();
  transfers.read_seconds = transfers.read_bytes = 0;
  const auto start = Clock::now();
  for (std::size_t i = 0; i < operands.args.size(); ++i) {
    measure::HostArgument& arg = operands.args[i];
    if (!arg.spec.is_buffer || !arg.spec.is_output) continue;
    check(api.cuMemcpyDtoH(arg.bytes.data(), buffers[i].get(), arg.bytes.size()), "cuMemcpyDtoH");
    transfers.read_bytes += double(arg.bytes.size());
  }
  transfers.read_seconds = seconds_since(start);
}

// cuLaunchKernel's parameters: a buffer's device address, a scalar's bytes in its dtype, then the
// tensor maps the kernel asks for, each encoded with its buffer's address, then the knobs it reads
// at run time. Throws std::invalid_argument for a tensor map of an argument that is no buffer.
struct Parameters {
  std::vector<CUdeviceptr> addresses;
  std::vector<CUtensorMap> maps;
  std::vector<std::int32_t> run_time_arguments;
  std::vector<void*> pointers;
  Parameters(measure::KernelOperands& operands, const std::vector<DeviceMemory>& buffers,
             const std::vector<TensorMapArgument>& tensor_maps = {},
             const std::vector<std::int32_t>& run_time = {})
      : addresses(operands.args.size()), run_time_arguments(run_time) {
    for (std::size_t i = 0; i < operands.args.size(); ++i) {
      measure::HostArgument& arg = operands.args[i];
      if (arg.spec.is_buffer) {
        addresses[i] = buffers[i].get();
        pointers.push_back(&addresses[i]);
      } else {
        pointers.push_back(arg.bytes.data());
      }
    }
    maps.reserve(tensor_maps.size());  // the pointers below stay valid
    for (const TensorMapArgument& map : tensor_maps) {
      if (map.buffer >= operands.args.size() || !operands.args[map.buffer].spec.is_buffer)
        throw std::invalid_argument("a tensor map of argument " + std::to_string(map.buffer) + ", which is no buffer");
      maps.push_back(encode_tensor_map(map, addresses[map.buffer]));
      pointers.push_back(&maps.back());
    }
    for (std::int32_t& value : run_time_arguments) pointers.push_back(&value);
  }
};

CUfunction function_of(const Module& module, const std::string& symbol) {
  CUfunction function = nullptr;
  check(DriverApi::get().cuModuleGetFunction(&function, module.get(), symbol.c_str()), "cuModuleGetFunction");
  return function;
}

void launch(CUfunction function, const kernels::LaunchSize& size, CUstream stream, Parameters& parameters) {
  auto u = [](std::int64_t value) { return static_cast<unsigned>(value); };
  check(DriverApi::get().cuLaunchKernel(function, u(size.global[0]), u(size.global[1]), u(size.global[2]),
                                        u(size.local[0]), u(size.local[1]), u(size.local[2]),
                                        u(size.shared_memory_bytes), stream, parameters.pointers.data(), nullptr),
        "cuLaunchKernel");
}

// Past 48 KiB a kernel must opt in to its dynamic shared memory.
void allow_shared_memory(CUfunction function, std::int64_t bytes) {
  if (bytes <= kDefaultSharedMemoryBytes) return;
  check(DriverApi::get().cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            static_cast<int>(bytes)),
        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
}

class CudaCandidate final : public measure::LoadedCandidate {
 public:
  CudaCandidate(Module module, CUfunction function, const CudaArtifact& artifact, CUstream stream,
                measure::KernelOperands& operands, const std::vector<DeviceMemory>& buffers)
      : module_(std::move(module)), function_(function), launch_(artifact.launch), stream_(stream),
        operands_(operands), buffers_(buffers), parameters_(operands, buffers, artifact.tensor_maps, artifact.run_time_arguments),
        from_cache_(artifact.from_cache) {}

  void poison_output() override {
    transfers_ = {};
    upload(operands_, buffers_, transfers_);
  }

  // A call's time: `times` launches replayed from a CUDA graph of up to kGraphLaunches of them
  // between two CUDA events, over the launches made (times rounded up to whole graphs). That is how
  // the peers (cuBLAS and cuDNN through PyTorch) are timed, and how a network replaying its graph
  // runs; launched one at a time with events around each, a kernel shorter than the host's launch
  // is timed waiting for the host (a one-block kernel on an H200: 5.1 us so, 1.0 us from a graph).
  double run(int times) override {
    const int per_graph = std::min(times, kGraphLaunches);
    if (graph_launches_ != per_graph) capture(per_graph);
    const int graphs = (times + per_graph - 1) / per_graph;
    const DriverApi& api = DriverApi::get();
    if (!start_.get()) {
      start_ = create_event();
      end_ = create_event();
    }
    check(api.cuEventRecord(start_.get(), stream_), "cuEventRecord");
    for (int i = 0; i < graphs; ++i) check(api.cuGraphLaunch(graph_.get(), stream_), "cuGraphLaunch");
    check(api.cuEventRecord(end_.get(), stream_), "cuEventRecord");
    check(api.cuEventSynchronize(end_.get()), "cuEventSynchronize");
    float milliseconds = 0;
    check(api.cuEventElapsedTime(&milliseconds, start_.get(), end_.get()), "cuEventElapsedTime");
    return milliseconds * 1e-3 / (double(graphs) * per_graph);
  }

  void fetch_outputs() override {
    check(DriverApi::get().cuStreamSynchronize(stream_), "cuStreamSynchronize");
    download_outputs(operands_, buffers_, transfers_);
  }

  void describe(measure::WorkerReply& reply) const override {
    // The builder compiled it (or found it compiled) and the record holds that; nothing here.
    reply.program_cached = from_cache_;
    reply.transfer = transfers_;
  }

 private:
  static constexpr int kGraphLaunches = 20;  // as the peers' batches

  // The graph of `launches` launches on the stream; a launch refused while capturing ends the
  // capture (the stream must not stay in it) and throws as a launch does.
  void capture(int launches) {
    const DriverApi& api = DriverApi::get();
    graph_.reset();
    graph_launches_ = 0;
    check(api.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
    CUgraph captured = nullptr;
    try {
      for (int i = 0; i < launches; ++i) launch(function_, launch_, stream_, parameters_);
    } catch (...) {
      api.cuStreamEndCapture(stream_, &captured);
      Graph abandoned(captured);
      throw;
    }
    check(api.cuStreamEndCapture(stream_, &captured), "cuStreamEndCapture");
    const Graph graph(captured);
    CUgraphExec executable = nullptr;
    check(api.cuGraphInstantiateWithFlags(&executable, graph.get(), 0), "cuGraphInstantiateWithFlags");
    graph_ = GraphExec(executable);
    graph_launches_ = launches;
  }

  Module module_;
  CUfunction function_;
  kernels::LaunchSize launch_;
  CUstream stream_;
  measure::KernelOperands& operands_;
  const std::vector<DeviceMemory>& buffers_;
  Parameters parameters_;
  Event start_, end_;  // around a repeat's replays
  GraphExec graph_;
  int graph_launches_ = 0;
  measure::Transfers transfers_;
  bool from_cache_;
};

bool is_image_error(CUresult code) {
  return code == CUDA_ERROR_INVALID_IMAGE || code == CUDA_ERROR_NO_BINARY_FOR_GPU || code == CUDA_ERROR_INVALID_PTX ||
         code == CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
}

}  // namespace

CudaWorker::~CudaWorker() {
  // Buffers and the stream go before the context they live in.
  buffers_.clear();
  stream_.reset();
  context_.reset();
}

std::vector<kernels::DeviceInfo> CudaWorker::devices() {
  std::vector<kernels::DeviceInfo> devices;
  if (!DriverApi::get().has_devices()) return devices;
  for (const auto& device : list_cuda_devices()) devices.push_back(cuda_device_info(device));
  return devices;
}

kernels::DeviceInfo CudaWorker::device(const kernels::Target& target) {
  return cuda_device_info(find_cuda_device(target));
}

void CudaWorker::open(int ordinal) {
  if (context_ && ordinal_ == ordinal) return;
  buffers_for_.clear();
  buffers_.clear();
  stream_.reset();
  context_.reset();
  ordinal_.reset();
  const DriverApi& api = DriverApi::require();
  CUdevice device = 0;
  check(api.cuDeviceGet(&device, ordinal), "cuDeviceGet");
  context_ = std::make_unique<PrimaryContext>(device);
  stream_ = create_stream();
  ordinal_ = ordinal;
  char pci_bus_id[32] = {};
  check(api.cuDeviceGetPCIBusId(pci_bus_id, sizeof pci_bus_id, device), "cuDeviceGetPCIBusId");
  sharing_ = std::make_unique<GpuSharing>(pci_bus_id);
}

std::optional<double> CudaWorker::device_load_since(const measure::WorkerRequest& /*request*/,
                                                    double since_unix_seconds) {
  if (!sharing_) return std::nullopt;
  return sharing_->others_share_since(since_unix_seconds, ::getpid());
}

void CudaWorker::allocate_buffers(const measure::KernelOperands& operands) {
  if (buffers_for_ == operands.id) return;
  buffers_for_.clear();
  buffers_.clear();
  for (const auto& arg : operands.args) buffers_.push_back(arg.spec.is_buffer ? allocate(arg.bytes.size()) : DeviceMemory());
  buffers_for_ = operands.id;
}

void CudaWorker::prepare(const measure::WorkerRequest& request, const measure::Operands& operands) {
  open(cuda_ordinal(kernels::split_target(request.target).spec));
  allocate_buffers(operands.values);
}

std::optional<Module> CudaWorker::load_module(const CudaArtifact& artifact, measure::WorkerReply& reply) {
  CUmodule module = nullptr;
  const CUresult result = DriverApi::get().cuModuleLoadData(&module, artifact.module.data());
  if (is_image_error(result)) {
    reply = measure::failure_reply("build_error", "the device cannot load the module compiled for " + artifact.arch +
                                                      ": " + error_text(result));
    return std::nullopt;
  }
  check(result, "cuModuleLoadData");
  return Module(module);
}

bool CudaWorker::run_kernel_reference(const CudaArtifact& artifact, measure::KernelOperands& operands,
                                      measure::WorkerReply& reply) {
  const std::string& entry = operands.check.entry;
  if (artifact.reference.empty()) {
    reply = measure::failure_reply("reference_error", "the candidate's module holds no reference kernel '" + entry + "'");
    return false;
  }
  auto module = load_module(artifact, reply);
  if (!module) {
    reply.status = "reference_error";
    return false;
  }
  const CUfunction function = function_of(*module, artifact.reference);
  allow_shared_memory(function, operands.check.launch.shared_memory_bytes);
  measure::reset_for_run(operands, 0);
  measure::Transfers ignored;
  upload(operands, buffers_, ignored);
  Parameters parameters(operands, buffers_);
  launch(function, operands.check.launch, stream_.get(), parameters);
  check(DriverApi::get().cuStreamSynchronize(stream_.get()), "cuStreamSynchronize (reference)");
  download_outputs(operands, buffers_, ignored);
  if (const std::string problem = measure::take_reference_outputs(operands); !problem.empty()) {
    reply = measure::failure_reply("reference_error", "the check's reference kernel '" + entry + "' " + problem);
    return false;
  }
  return true;
}

bool CudaWorker::run_reference(const measure::WorkerRequest& request, measure::Operands& operands,
                               measure::WorkerReply& reply) {
  if (!operands.values.needs_reference()) return true;
  return run_kernel_reference(read_cuda_artifact(request.artifact), operands.values, reply);
}

std::unique_ptr<measure::LoadedCandidate> CudaWorker::load(const measure::WorkerRequest& request,
                                                           measure::Operands& operands, measure::WorkerReply& reply) {
  const CudaArtifact artifact = read_cuda_artifact(request.artifact);
  if (artifact.workload_key != request.workload) {
    reply = measure::failure_reply("runtime_error", "artifact is for " + artifact.workload_key + ", not " + request.workload);
    return nullptr;
  }
  // The runner has a kernel file's reference run on its own first (run_reference); a runner that
  // did not gets it run here, by the problem's first candidate.
  if (operands.values.needs_reference() && !run_kernel_reference(artifact, operands.values, reply)) return nullptr;
  auto module = load_module(artifact, reply);
  if (!module) return nullptr;
  CUfunction function = nullptr;
  const CUresult found = DriverApi::get().cuModuleGetFunction(&function, module->get(), artifact.entry.c_str());
  if (found == CUDA_ERROR_NOT_FOUND) {
    reply = measure::failure_reply("build_error", "the module has no kernel '" + artifact.entry + "'");
    return nullptr;
  }
  check(found, "cuModuleGetFunction");
  allow_shared_memory(function, artifact.launch.shared_memory_bytes);
  return std::make_unique<CudaCandidate>(std::move(*module), function, artifact, stream_.get(), operands.values, buffers_);
}

// After a candidate's exception: a sticky fault shows in every later call, a synchronise too. The
// buffers go either way (a faulting kernel may have written anywhere in them).
void CudaWorker::reset() {
  const DriverApi& api = DriverApi::get();
  if (context_ && is_sticky(api.cuStreamSynchronize(stream_.get()))) poisoned_ = true;
  buffers_for_.clear();
  buffers_.clear();
}

}  // namespace optune::backends::cuda

namespace optune::backends {

std::unique_ptr<measure::WorkerBackend> make_cuda_worker() { return std::make_unique<cuda::CudaWorker>(); }

}  // namespace optune::backends
