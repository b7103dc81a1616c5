// RAII owners of the driver's handles (modules, streams, events, device memory) and of a device's
// primary context. Each is released once, through DriverApi::get(); release errors are ignored,
// since after a sticky error every release fails the same way and the process is ending anyway.
#pragma once

#include <utility>

#include "driver_api.hpp"

namespace optune::backends::cuda {

// A handle released by the table's `Release` member (e.g. &DriverApi::cuModuleUnload).
template <typename Handle, auto Release>
class Owned {
 public:
  Owned() = default;
  explicit Owned(Handle handle) : handle_(handle) {}
  Owned(Owned&& other) noexcept : handle_(std::exchange(other.handle_, Handle{})) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, Handle{});
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }

  Handle get() const { return handle_; }
  void reset() {
    if (handle_ != Handle{}) (DriverApi::get().*Release)(handle_);
    handle_ = Handle{};
  }

 private:
  Handle handle_{};
};

using Module = Owned<CUmodule, &DriverApi::cuModuleUnload>;
using Stream = Owned<CUstream, &DriverApi::cuStreamDestroy>;
using Event = Owned<CUevent, &DriverApi::cuEventDestroy>;
using DeviceMemory = Owned<CUdeviceptr, &DriverApi::cuMemFree>;
using Graph = Owned<CUgraph, &DriverApi::cuGraphDestroy>;
using GraphExec = Owned<CUgraphExec, &DriverApi::cuGraphExecDestroy>;

// A device's primary context (the one the CUDA runtime would use too), retained and made current
// on this thread for the owner's lifetime.
class PrimaryContext {
 public:
  explicit PrimaryContext(CUdevice device) : device_(device) {
    const DriverApi& api = DriverApi::require();
    check(api.cuDevicePrimaryCtxRetain(&context_, device), "cuDevicePrimaryCtxRetain");
    try {
      check(api.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
    } catch (...) {
      api.cuDevicePrimaryCtxRelease(device_);
      throw;
    }
  }
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  ~PrimaryContext() {
    const DriverApi& api = DriverApi::get();
    api.cuCtxSetCurrent(nullptr);
    api.cuDevicePrimaryCtxRelease(device_);
  }
  CUcontext get() const { return context_; }

 private:
  CUdevice device_;
  CUcontext context_ = nullptr;
};

inline Module load_module(const void* image) {
  CUmodule module = nullptr;
  check(DriverApi::require().cuModuleLoadData(&module, image), "cuModuleLoadData");
  return Module(module);
}

// A blocking stream: ordered with the synchronous copies (cuMemcpyHtoD/DtoH), which use the
// legacy default stream.
inline Stream create_stream() {
  CUstream stream = nullptr;
  check(DriverApi::require().cuStreamCreate(&stream, CU_STREAM_DEFAULT), "cuStreamCreate");
  return Stream(stream);
}

inline Event create_event() {
  CUevent event = nullptr;
  check(DriverApi::require().cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
  return Event(event);
}

inline DeviceMemory allocate(std::size_t bytes) {
  CUdeviceptr pointer = 0;
  check(DriverApi::require().cuMemAlloc(&pointer, bytes), "cuMemAlloc");
  return DeviceMemory(pointer);
}

}  // namespace optune::backends::cuda
