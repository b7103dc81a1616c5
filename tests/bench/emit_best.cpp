// bench_emit_best: writes the candidate source of the best recorded config of every workload in a
// database (for one target), so a benchmark can compile and time exactly what the tuner found.
//
//   build/tests/bench/bench_emit_best --db tuned.db --out DIR     (prints "<M>,<N>,<K> <file>" lines)
//   ... --which default: the template's default config of each workload instead (same device)
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "optune/db/database.hpp"
#include "optune/kernels/kernel_template.hpp"

int main(int argc, char** argv) {
  std::string database_path, out_dir, target = "cpu", which = "best";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--db") database_path = argv[i + 1];
    if (flag == "--out") out_dir = argv[i + 1];
    if (flag == "--target") target = argv[i + 1];
    if (flag == "--which") which = argv[i + 1];
  }
  if (database_path.empty() || out_dir.empty()) {
    std::fprintf(stderr, "usage: bench_emit_best --db FILE --out DIR [--target cpu]\n");
    return 2;
  }
  using namespace optune;
  auto database = db::Database::open(database_path, db::Database::Mode::kReadOnly);
  db::RecordFilter filter;
  filter.target = target;
  std::filesystem::create_directories(out_dir);
  for (const auto& best : database.top_k(filter, 1)) {
    auto workload = kernels::parse_workload_key(best.workload_key);
    const auto& kernel = kernels::find_template(workload.op, kernels::parse_target(target).backend);
    auto device = kernels::DeviceInfo::from_fingerprint(best.device_fingerprint);
    auto space = kernel.space(workload, device);
    auto config = which == "default" ? kernel.default_config(workload, device, space) : space.from_json(best.config);
    std::string file = out_dir + "/" + best.workload_key + ".cpp";
    std::ofstream(file) << kernel.emit_source(workload, device, search_space::ConfigView(space, config));
    if (workload.op == kernels::Op::kGemm)
      std::printf("%lld,%lld,%lld %s\n", static_cast<long long>(workload.gemm().M),
                  static_cast<long long>(workload.gemm().N), static_cast<long long>(workload.gemm().K), file.c_str());
    else
      std::printf("%s %s\n", best.workload_key.c_str(), file.c_str());
  }
  return 0;
}
