// OpenCL device listing and target resolution, through the ICD loader.
#include "optune/backends/opencl/devices.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "opencl_api.hpp"

namespace optune::measure {
namespace {

using opencl::device_text;
using opencl::platform_text;

std::vector<cl_platform_id> platform_ids() {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  return platforms;
}

std::vector<cl_device_id> device_ids(cl_platform_id platform) {
  cl_uint count = 0;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_device_id> ids(count);
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr);
  return ids;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// "" matches everything; digits match the index; else a case-insensitive substring of the name.
bool matches(const std::string& wanted, std::size_t index, const std::string& name) {
  if (wanted.empty()) return true;
  if (std::all_of(wanted.begin(), wanted.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::to_string(index) == wanted;
  return lower(name).find(lower(wanted)) != std::string::npos;
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

}  // namespace

OpenCLSelector parse_opencl_spec(std::string_view spec) {
  OpenCLSelector selector;
  const auto colon = spec.find(':');
  selector.platform = std::string(trim(spec.substr(0, colon)));
  if (colon != std::string_view::npos) {
    selector.device = std::string(trim(spec.substr(colon + 1)));
    if (selector.device.empty()) throw std::invalid_argument("target: empty device in 'opencl:" + std::string(spec) + "'");
  } else if (!spec.empty() && selector.platform.empty()) {
    throw std::invalid_argument("target: empty platform in 'opencl:" + std::string(spec) + "'");
  }
  return selector;
}

std::string OpenCLSelector::spec() const {
  if (device.empty()) return platform;
  return platform + ":" + device;
}

std::vector<kernels::DeviceInfo> list_opencl_devices() {
  std::vector<kernels::DeviceInfo> devices;
  for (cl_platform_id platform : platform_ids()) {
    for (cl_device_id device : device_ids(platform)) devices.push_back(opencl::describe_device(device));
  }
  return devices;
}

kernels::DeviceInfo find_opencl_device(const kernels::Target& target) { return cl::select_device(target).info; }

namespace cl {

SelectedDevice select_device(const kernels::Target& target) {
  if (target.backend != "opencl") throw std::invalid_argument("opencl: " + target.str() + " is not an OpenCL target");
  const OpenCLSelector selector = parse_opencl_spec(target.spec);
  const auto platforms = platform_ids();
  std::string seen;
  // An empty platform with a device index means the first platform.
  const bool first_platform_only = selector.platform.empty() && !selector.device.empty();
  for (std::size_t p = 0; p < platforms.size(); ++p) {
    const std::string platform_name = platform_text(platforms[p], CL_PLATFORM_NAME);
    const auto devices = device_ids(platforms[p]);
    for (std::size_t d = 0; d < devices.size(); ++d) {
      const std::string device_name = device_text(devices[d], CL_DEVICE_NAME);
      seen += (seen.empty() ? "" : ", ") + std::to_string(p) + ":" + std::to_string(d) + " " + platform_name +
              " / " + device_name;
      if (matches(selector.platform, p, platform_name) && matches(selector.device, d, device_name))
        return {platforms[p], devices[d], opencl::describe_device(devices[d])};
    }
    if (first_platform_only) break;
  }
  throw std::invalid_argument("opencl: no device matches target '" + target.str() + "' (" +
                              (seen.empty() ? "no OpenCL platform is installed" : "devices: " + seen) + ")");
}

double event_seconds(cl_event event) {
  cl_ulong start = 0, end = 0;
  check(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr),
        "clGetEventProfilingInfo");
  check(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr),
        "clGetEventProfilingInfo");
  return static_cast<double>(end - start) * 1e-9;
}

}  // namespace cl
}  // namespace optune::measure
