// The OpenCL C API as measure/ uses it: one include with the target version, RAII handles for
// contexts, queues, programs, kernels, buffers and events, error codes turned into names, and the
// device a target selects.
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/target.hpp"

namespace optune::measure::cl {

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

struct SelectedDevice {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  kernels::DeviceInfo info;
};
// Throws std::invalid_argument when no device matches the target.
SelectedDevice select_device(const kernels::Target& target);

// Seconds between an event's start and end (profiling must be on in its queue).
double event_seconds(cl_event event);

}  // namespace optune::measure::cl
