// bench_emit_best: writes the candidate source of the best recorded config of every workload in a
// database (for one target), so a benchmark can compile and time exactly what the tuner found.
//
//   build/tests/bench/bench_emit_best --db tuned.db --out DIR     (prints "<M>,<N>,<K> <file>" lines)
//   ... --which default: the template's default config of each workload instead (same device)
//   build/tests/bench/bench_emit_best --suite FILE --out DIR: the default config of every conv and
//       depthwise workload of a suite for this machine's CPU, no database needed
//       (prints "<workload key> <file>" lines); --cores N: as if the CPU had N cores (threads = N);
//       --layout L: the suite keeps layout L between its conv layers (as `optune tune --layout`)
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "optune/backends/registry.hpp"
#include "optune/db/database.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/backends/cpu/cpu_device.hpp"
#include "optune/tuner/scheduling/suite.hpp"

namespace {

using namespace optune;

// Writes the candidate of `config` (in `space`) to DIR/<workload key>.cpp and returns the path.
// A template's run-time knobs (gemm.cpu's blocks and threads) are not in its source: the worker
// passes them to optune_set_knobs before a run, so the file sets them itself when it is loaded
// (a benchmark that dlopens it runs the config, not the placeholders).
std::string write_candidate(const std::string& out_dir, const kernels::KernelTemplate& kernel,
                            const kernels::Workload& workload, const kernels::DeviceInfo& device,
                            const search_space::ConfigSpace& space, const search_space::Config& config) {
  const search_space::ConfigView view(space, config);
  std::string file = out_dir + "/" + workload.key() + ".cpp";
  std::ofstream out(file);
  out << kernel.emit_source(workload, device, view);
  const std::vector<long long> values = kernel.run_time_knob_values(workload, device, view);
  if (!values.empty()) {
    std::string list;
    for (long long value : values) list += (list.empty() ? "" : ", ") + std::to_string(value) + "LL";
    out << "\n// The config's run-time knobs, set when this object is loaded, as the worker sets them.\n"
           "namespace {\n"
           "const bool run_time_knobs_set = [] {\n"
           "  const long long values[] = {" << list << "};\n"
           "  optune_set_knobs(values, " << values.size() << ");\n"
           "  return true;\n"
           "}();\n"
           "}  // namespace\n";
  }
  return file;
}

void emit_suite_defaults(const std::string& suite_path, const std::string& layout, const std::string& out_dir,
                         int cores) {
  kernels::DeviceInfo device = measure::detect_local_cpu();
  if (cores > 0) device.cores = cores;
  std::optional<int> layout_block;
  if (!layout.empty()) layout_block = kernels::parse_layout(layout);
  for (const auto& entry : tuner::load_suite(suite_path, layout_block).entries) {
    if (entry.workload.op == kernels::Op::kGemm) continue;
    const auto& kernel = backends::default_template(entry.workload, "cpu", device);
    auto space = kernel.space(entry.workload, device);
    auto config = kernel.default_config(entry.workload, device, space);
    std::printf("%s %s\n", entry.workload.key().c_str(),
                write_candidate(out_dir, kernel, entry.workload, device, space, config).c_str());
  }
}

}  // namespace

int main(int argc, char** argv) try {
  std::string database_path, out_dir, target = "cpu", which = "best", suite, layout;
  int cores = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--db") database_path = argv[i + 1];
    if (flag == "--out") out_dir = argv[i + 1];
    if (flag == "--target") target = argv[i + 1];
    if (flag == "--which") which = argv[i + 1];
    if (flag == "--suite") suite = argv[i + 1];
    if (flag == "--layout") layout = argv[i + 1];
    if (flag == "--cores") cores = std::stoi(argv[i + 1]);
  }
  if ((database_path.empty() && suite.empty()) || out_dir.empty()) {
    std::fprintf(stderr, "usage: bench_emit_best (--db FILE [--which best|default] | --suite FILE [--cores N] [--layout L]) "
                         "--out DIR [--target cpu]\n");
    return 2;
  }
  std::filesystem::create_directories(out_dir);
  if (!suite.empty()) {
    emit_suite_defaults(suite, layout, out_dir, cores);
    return 0;
  }
  auto database = db::Database::open(database_path, db::Database::Mode::kReadOnly);
  db::RecordFilter filter;
  filter.target = target;
  for (const auto& best : database.top_k(filter, 1)) {
    auto workload = kernels::parse_workload_key(best.workload_key);
    const auto& kernel = backends::template_of_record(best.template_name, best.config);
    auto device = kernels::DeviceInfo::from_fingerprint(best.device_fingerprint);
    auto space = kernel.space(workload, device);
    auto config = which == "default" ? kernel.default_config(workload, device, space) : space.from_json(best.config);
    std::string file = write_candidate(out_dir, kernel, workload, device, space, config);
    if (workload.op == kernels::Op::kGemm)
      std::printf("%lld,%lld,%lld %s\n", static_cast<long long>(workload.gemm().M),
                  static_cast<long long>(workload.gemm().N), static_cast<long long>(workload.gemm().K), file.c_str());
    else
      std::printf("%s %s\n", best.workload_key.c_str(), file.c_str());
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_emit_best: %s\n", e.what());
  return 2;
}
