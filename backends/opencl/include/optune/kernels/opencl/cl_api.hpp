// The OpenCL C API as optune uses it, shared by the measuring worker (measure/) and the runtime
// applications link (optune::opencl): one include with the target version, RAII handles for
// contexts, queues, programs, kernels, buffers and events, error codes turned into names, and the
// DeviceInfo of a device (what templates shape their spaces by, and what records are keyed by).
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <stdexcept>
#include <string>

#include "optune/kernels/device_info.hpp"

namespace optune::opencl {

// An OpenCL object released once, with the API's own release function.
template <typename Handle, cl_int (*Release)(Handle)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(Handle handle) : handle_(handle) {}
  Owned(Owned&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = other.handle_;
      other.handle_ = nullptr;
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }
  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }
  void reset() {
    if (handle_) Release(handle_);
    handle_ = nullptr;
  }

 private:
  Handle handle_ = nullptr;
};

using Context = Owned<cl_context, clReleaseContext>;
using Queue = Owned<cl_command_queue, clReleaseCommandQueue>;
using Program = Owned<cl_program, clReleaseProgram>;
using Kernel = Owned<cl_kernel, clReleaseKernel>;
using Buffer = Owned<cl_mem, clReleaseMemObject>;
using Event = Owned<cl_event, clReleaseEvent>;

// "CL_OUT_OF_RESOURCES (-5)".
std::string error_name(cl_int code);

// A failed call of the OpenCL API (not of a candidate's code): the message names the call.
class Error : public std::runtime_error {
 public:
  Error(const std::string& call, cl_int code) : std::runtime_error(call + ": " + error_name(code)), code_(code) {}
  cl_int code() const { return code_; }

 private:
  cl_int code_;
};
inline void check(cl_int code, const char* call) {
  if (code != CL_SUCCESS) throw Error(call, code);
}

// A text property of a platform or device ("" when the driver does not answer).
std::string platform_text(cl_platform_id platform, cl_platform_info what);
std::string device_text(cl_device_id device, cl_device_info what);

// The facts templates need and the fingerprint records are stored under, for one device.
kernels::DeviceInfo describe_device(cl_device_id device);

// A read-write buffer of `bytes` (a multiple of 4), zero-filled through `queue` before it returns:
// a kernel's scratch (OpenCLKernel::scratch_bytes).
Buffer zeroed_buffer(cl_context context, cl_command_queue queue, std::size_t bytes);

}  // namespace optune::opencl
