#include "optune/backends/cpu/cpu_device.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include <sched.h>
#include <sys/utsname.h>

namespace optune::measure {
namespace {

// The ISA flags that change which kernels are fast or even legal; the rest of /proc/cpuinfo's
// flags would make fingerprints differ between identical machines with other microcode.
const std::set<std::string> kRelevantFlags = {
    "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512dq", "avx512vl",
    "avx512_vnni", "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8", "asimd", "asimdhp", "sve", "sve2", "neon"};

std::string trim(const std::string& text) {
  auto begin = text.find_first_not_of(" \t");
  auto end = text.find_last_not_of(" \t\r\n");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

std::int64_t parse_cache_size(const std::string& text) {  // "32K", "1024K", "32M"
  std::int64_t value = std::atoll(text.c_str());
  if (text.find('K') != std::string::npos) value *= 1024;
  if (text.find('M') != std::string::npos) value *= 1024 * 1024;
  return value;
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return trim(line);
}

void read_caches(kernels::DeviceInfo& info) {
  for (int index = 0; index < 8; ++index) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::string level = read_first_line(dir + "level");
    if (level.empty()) break;
    std::string type = read_first_line(dir + "type");
    std::int64_t size = parse_cache_size(read_first_line(dir + "size"));
    if (level == "1" && type == "Data") info.l1d_bytes = size;
    if (level == "2") info.l2_bytes = size;
    if (level == "3") info.l3_bytes = size;
  }
}

// The cap OPTUNE_MAX_CPU_ISA names ("" when unset), checked against this machine's architecture.
std::string isa_cap(const std::string& arch) {
  const char* value = std::getenv("OPTUNE_MAX_CPU_ISA");
  if (!value || !*value) return "";
  std::string cap = value;
  std::transform(cap.begin(), cap.end(), cap.begin(), [](unsigned char c) { return std::tolower(c); });
  if (cap != "avx2")
    throw std::invalid_argument("OPTUNE_MAX_CPU_ISA: unknown ISA '" + std::string(value) + "' (supported: avx2)");
  if (arch != "x86_64")
    throw std::invalid_argument("OPTUNE_MAX_CPU_ISA=" + std::string(value) + " applies to x86_64 CPUs, not " + arch);
  return cap;
}

std::string machine_arch() {
  utsname names{};
  return uname(&names) == 0 ? names.machine : "";
}

}  // namespace

std::vector<std::string> isa_cap_flags() {
  if (isa_cap(machine_arch()).empty()) return {};
  return {"-mno-avx512f", "-mno-amx-tile"};  // -mno-avx512f also turns off every AVX-512 subset
}

kernels::DeviceInfo detect_local_cpu() {
  kernels::DeviceInfo info;
  info.kind = "cpu";
  info.arch = machine_arch();
  const std::string cap = isa_cap(info.arch);
  cpu_set_t cpus;
  info.cores = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;

  std::ifstream cpuinfo("/proc/cpuinfo");
  std::set<std::string> flags;
  // x86 lists "flags", Arm "Features"; under user-mode emulation (qemu-aarch64) /proc/cpuinfo is
  // the host's, whose flags must not be taken for the emulated CPU's.
  const std::string_view flags_key = info.arch == "x86_64" || info.arch.starts_with("i") ? "flags" : "Features";
  bool host_cpuinfo = false;
  for (std::string line; std::getline(cpuinfo, line);) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = trim(line.substr(0, colon));
    std::string value = trim(line.substr(colon + 1));
    if ((key == "model name" || key == "Model") && info.name.empty()) info.name = value;
    if ((key == "flags" || key == "Features") && key != flags_key) host_cpuinfo = true;
    if (key == flags_key && flags.empty()) {
      std::istringstream words(value);
      for (std::string word; words >> word;)
        if (kRelevantFlags.count(word)) flags.insert(word);
    }
  }
  if (info.arch == "aarch64") flags.insert("neon");  // Advanced SIMD is mandatory on AArch64
  if (info.name.empty()) info.name = info.arch + " cpu";
  if (host_cpuinfo) info.name = info.arch + " (emulated on " + info.name + ")";
  if (cap == "avx2") {
    std::erase_if(flags, [](const std::string& flag) { return flag.starts_with("avx512") || flag.starts_with("amx"); });
    info.name += " (ISA capped at AVX2)";
  }
  info.isa.assign(flags.begin(), flags.end());
  read_caches(info);
  return info;
}

}  // namespace optune::measure
