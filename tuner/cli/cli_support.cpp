#include "cli_support.hpp"

#include <filesystem>

#include "measuring.hpp"
#include "optune/kernels/opencl/program_cache.hpp"

namespace optune::cli {
namespace fs = std::filesystem;
namespace {

fs::path executable_dir() {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::current_path() : self.parent_path();
}

}  // namespace

app::InstallPaths install_paths() {
  return app::install_paths_beside(executable_dir().string(), opencl_cache_dir());
}

std::string worker_path() {
  auto worker = install_paths().worker;
  if (fs::exists(worker)) return worker;
  throw std::runtime_error("optune-worker not found next to optune in " + executable_dir().string());
}

std::string opencl_cache_dir() { return opencl::default_program_cache_dir(); }

void add_layout_option(CLI::App& command, std::string& layout) {
  command.add_option("--layout", layout,
                     "With --suite: the activation layout the network keeps between conv layers (nchw, nchw4c, "
                     "nchw8c, nchw16c), replacing the suite file's; layers that pin their own keep it");
}

Measuring::Measuring(const MeasureSettings& settings, const std::optional<Remote>& remote)
    : app::Measuring(settings, install_paths(), remote,
                     [](const std::string& line) { std::fprintf(stderr, "optune: rpc: %s\n", line.c_str()); }) {}

}  // namespace optune::cli
