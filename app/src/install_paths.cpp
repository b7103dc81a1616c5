#include "optune/app/install_paths.hpp"

#include <filesystem>

#include "optune/app/run_locks.hpp"

namespace optune::app {
namespace fs = std::filesystem;

InstallPaths install_paths_beside(const std::string& bin_dir, const std::string& program_cache_dir,
                                  const std::string& lock_dir) {
  const fs::path bin(bin_dir);
  const fs::path prefix = bin.parent_path();
  const fs::path source_kernels(OPTUNE_SOURCE_KERNEL_INCLUDE_DIR);
  InstallPaths paths;
  paths.worker = (bin / "optune-worker").string();
  const fs::path installed_include = prefix / "include";
  paths.kernel_include_dirs = {fs::exists(installed_include / "optune" / "kernels" / "cpu" / "gemm.hpp")
                                   ? installed_include.string()
                                   : source_kernels.string()};
  const fs::path installed_sources = prefix / OPTUNE_INSTALLED_KERNEL_SOURCE_DIR;
  paths.kernel_source_dir =
      fs::exists(installed_sources) ? installed_sources.string() : std::string(OPTUNE_SOURCE_KERNEL_SOURCE_DIR);
  paths.target_description_dirs = {(prefix / "share" / "optune" / "targets").string(),
                                   std::string(OPTUNE_SOURCE_CONFIG_DIR) + "/targets"};
  paths.program_cache_dir = program_cache_dir;
  paths.lock_dir = machine_lock_dir(lock_dir);
  return paths;
}

}  // namespace optune::app
