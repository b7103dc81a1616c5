// The header `optune apply-best --kernel FILE` writes: the build-time use of a user's kernel file
// (issue 20). For every tuned problem size and device, the best recorded config as a row of a
// constexpr table, CLBlast-style: the config's knob values (a plain struct), the -D string the
// tuner built it with and, for OpenCL kernels, the launch (dimensions, global and local sizes).
// The application compiles its kernel with the row's defines (OpenCL: clBuildProgram options;
// cpu: the compiler's command line) and launches it with the row's sizes. A size or device
// without a row runs the file's default config, the first valid one for that size and device;
// the header shows it for the file's own extents and notes the wanted sizes that have no row.
// The header stands alone: it includes only standard headers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "optune/db/database.hpp"
#include "optune/kernels/device_info.hpp"
#include "optune/kernels/kernel_template.hpp"

namespace optune::tuner {

struct KernelHeaderRequest {
  std::string target;                // "" every target of the kernel's backend; else exact
  std::string device;                // "" every device; else a device id or part of its name
  std::vector<std::string> wanted;   // workload keys of this kernel the application uses
  std::string source;                // the database, named in the header's first comment
  std::string kernel_file;           // as given, named in the header's first comment
  // Whose default config the header shows when nothing is recorded (this machine's device).
  std::optional<kernels::DeviceInfo> fallback_device;
};

struct KernelHeader {
  std::string text;
  std::size_t rows = 0;
  std::vector<std::string> untuned;      // "<workload key> on <device>": wanted, without a row
  std::vector<std::string> passed_over;  // records left out: forged, or of an older space
  std::vector<std::string> noisy;        // "<workload key> on <device>: <why>": rows of noisy records
  std::vector<std::string> devices;      // names of the devices with rows
};

// `kernel_file` is the kernel file's template (backends::kernel_file_template). Throws
// std::invalid_argument when a wanted key is not a workload of this kernel.
KernelHeader make_kernel_header(const db::Database& database, const kernels::KernelTemplate& kernel_file,
                                const KernelHeaderRequest& request);

}  // namespace optune::tuner
