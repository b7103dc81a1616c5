#include "optune/app/install_paths.hpp"

#include <filesystem>

#include "optune/app/run_locks.hpp"
#include "optune/backends/registry.hpp"

namespace optune::app {
namespace fs = std::filesystem;

InstallPaths install_paths_beside(const std::string& bin_dir, const std::string& program_cache_dir,
                                  const std::string& lock_dir) {
  const fs::path bin(bin_dir);
  const fs::path prefix = bin.parent_path();
  InstallPaths paths;
  paths.worker = (bin / "optune-worker").string();
  for (const auto* backend : backends::all_backends()) {
    const std::optional<measure::KernelSourceDir> sources = backend->kernel_sources();
    if (!sources) continue;
    const fs::path installed = prefix / sources->installed;
    paths.kernel_source_dirs[std::string(backend->name())] =
        fs::exists(installed / sources->marker) ? installed.string() : sources->in_source_tree;
  }
  paths.target_description_dirs = {(prefix / "share" / "optune" / "targets").string(),
                                   std::string(OPTUNE_SOURCE_CONFIG_DIR) + "/targets"};
  paths.program_cache_dir = program_cache_dir;
  paths.lock_dir = machine_lock_dir(lock_dir);
  return paths;
}

}  // namespace optune::app
