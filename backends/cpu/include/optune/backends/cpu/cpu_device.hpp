// Detects this machine's CPU (model, usable cores, ISA flags, cache sizes) from /proc and /sys.
#pragma once

#include <string>
#include <vector>

#include "optune/kernels/device_info.hpp"

namespace optune::measure {

// OPTUNE_MAX_CPU_ISA=avx2 caps the ISA the CPU backend uses on an x86 machine, as oneDNN's
// ONEDNN_MAX_CPU_ISA caps its own: the detected device loses its AVX-512 and AMX flags (so it has a
// fingerprint of its own and the templates' spaces keep to 16 vector registers) and candidates are
// compiled without AVX-512. It tunes for a fleet of AVX2 machines on an AVX-512 workstation.
// Throws std::invalid_argument for a value it does not know or a CPU it does not apply to.
kernels::DeviceInfo detect_local_cpu();

// The compiler flags that keep this machine's candidates within OPTUNE_MAX_CPU_ISA (after
// -march=native); none when it is unset.
std::vector<std::string> isa_cap_flags();

}  // namespace optune::measure
