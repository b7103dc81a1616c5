#include "builder.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "artifact.hpp"
#include "compile.hpp"
#include "cuda_template.hpp"
#include "nvrtc_api.hpp"
#include "optune/measure/parallel_processes.hpp"

namespace optune::backends::cuda {
namespace fs = std::filesystem;
namespace {

// NVRTC output kept in a build_error record: the first errors are the useful ones.
constexpr std::size_t kMaxLogBytes = 4000;
constexpr const char* kNothingRecorded = "; nothing of the batch recorded (fix the environment and run again)";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string clipped(std::string log) {
  if (log.size() > kMaxLogBytes) log = log.substr(0, kMaxLogBytes) + "\n[...]";
  return log;
}

// What NVRTC compiles for on a device whose compute capability its "sm_XY" isa flag gives.
std::string arch_of(const kernels::DeviceInfo& device, const NvrtcApi& nvrtc) {
  const int capability = device.nvidia_compute_capability();
  if (capability <= 0) throw std::invalid_argument("device " + device.name + " has no compute capability");
  return compile_arch(capability / 10, capability % 10, nvrtc.supported_archs());
}

// A candidate on its way through the batch.
struct Compile {
  CudaKernel kernel;
  std::string arch;
  std::string key;   // the cubin cache's
  std::string stem;  // work_dir/candidate_N: .cu, .request.json, .module, .result.json, .log
};

std::vector<std::string> name_expressions(const CudaKernel& kernel) {
  std::vector<std::string> names = {"&" + kernel.entry};
  if (!kernel.reference_entry.empty()) names.push_back("&" + kernel.reference_entry);
  return names;
}

}  // namespace

// NVRTC compiles a candidate and the driver loads (and finalizes) its PTX: a change of either may
// change its speed.
measure::Toolchain CudaBuilder::toolchain(const kernels::DeviceInfo& device) const {
  const NvrtcApi& nvrtc = NvrtcApi::get();
  if (!nvrtc.missing.empty()) return {"NVRTC (not found)", ""};
  std::string compiler = fmt::format("NVRTC {}.{}", nvrtc.major, nvrtc.minor);
  if (!device.driver_version.empty()) compiler += ", driver " + device.driver_version;
  return {compiler, ""};
}

CudaBuilder::CudaBuilder(CudaBuilderOptions options)
    : options_(std::move(options)), cache_(options_.cache_dir), work_dir_(options_.work_dir, "cuda") {
  if (options_.jobs <= 0) options_.jobs = std::max(1u, std::thread::hardware_concurrency());
}

CudaBuilder::~CudaBuilder() = default;

// The headers beside a kernel's source (what its #includes may read): part of the cache key, so
// that editing one compiles again.
const std::string& CudaBuilder::headers_of(const std::string& dir) {
  if (auto found = headers_.find(dir); found != headers_.end()) return found->second;
  std::string text;
  std::error_code error;
  if (!dir.empty()) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
      const std::string extension = entry.path().extension().string();
      if (entry.is_regular_file(error) && (extension == ".cuh" || extension == ".h" || extension == ".hpp"))
        files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) text += file.filename().string() + "\n" + read_text(file) + "\n";
  }
  return headers_[dir] = text;
}

const std::string& CudaBuilder::kernel_source(const std::string& file) {
  if (auto found = sources_.find(file); found != sources_.end()) return found->second;
  const fs::path path = fs::path(options_.kernel_source_dir) / file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("CUDA kernel source " + path.string() + " not found");
  return sources_[file] = read_text(path);
}

std::vector<measure::BuildResult> CudaBuilder::build(const std::vector<measure::MeasureInput>& inputs) {
  using measure::ErrorKind;
  std::vector<measure::BuildResult> results(inputs.size());
  std::vector<Compile> compiles(inputs.size());
  const NvrtcApi& nvrtc = NvrtcApi::get();

  auto write_artifact = [&](std::size_t index, const CachedModule& module, bool from_cache) {
    const Compile& compile = compiles[index];
    const measure::MeasureTask& task = *inputs[index].task;
    CudaArtifact artifact;
    artifact.template_name = task.kernel_template->name();
    artifact.workload_key = task.workload.key();
    artifact.arch = compile.arch;
    artifact.is_ptx = module.is_ptx;
    const auto names = name_expressions(compile.kernel);
    auto lowered = [&](const std::string& expression) {
      const auto found = module.lowered_names.find(expression);
      if (found == module.lowered_names.end()) throw std::runtime_error("NVRTC gave no symbol for " + expression);
      return found->second;
    };
    artifact.entry = lowered(names[0]);
    if (names.size() > 1) artifact.reference = lowered(names[1]);
    artifact.launch = compile.kernel.launch;
    artifact.tensor_maps = compile.kernel.tensor_maps;
    artifact.run_time_arguments = compile.kernel.run_time_arguments;
    artifact.compile_seconds = module.compile_seconds;
    artifact.from_cache = from_cache;
    artifact.module = module.module;
    results[index].artifact = compile.stem + ".artifact";
    results[index].build_seconds = from_cache ? 0 : module.compile_seconds;
    write_cuda_artifact(artifact, results[index].artifact);
  };

  std::map<std::string, std::size_t> compiling;             // cache key -> the input whose compile makes it
  std::map<std::size_t, std::vector<std::size_t>> sharers;  // that input -> inputs of the same program
  measure::ParallelProcesses processes;
  processes.jobs = options_.jobs;
  processes.timeout_seconds = options_.timeout_seconds;
  processes.start = [&](std::size_t index) -> std::optional<measure::Subprocess> {
    const measure::MeasureTask& task = *inputs[index].task;
    Compile& compile = compiles[index];
    compile.stem = work_dir_.path() + "/candidate_" + std::to_string(next_id_++);
    try {
      compile.kernel = as_cuda(*task.kernel_template)
                           .cuda_kernel(task.workload, task.device, search_space::ConfigView(task.space, inputs[index].config));
      compile.arch = arch_of(task.device, nvrtc);
      if (!compile.kernel.source_file.empty()) {
        compile.kernel.source = kernel_source(compile.kernel.source_file);
        compile.kernel.include_dir = options_.kernel_source_dir;
      }
    } catch (const std::exception& error) {
      results[index] = {"", ErrorKind::kBuildError, error.what(), 0};
      return std::nullopt;
    }
    const CudaKernel& kernel = compile.kernel;
    const std::string include_dir = kernel.include_dir.string();
    compile.key = fmt::format("nvrtc {}.{} {}\narch {}\noptions {}\nnames {}\ninclude {}\n{}\nsource\n{}",
                              nvrtc.major, nvrtc.minor, nvrtc.library, compile.arch, fmt::join(kernel.options, " "),
                              fmt::join(name_expressions(kernel), " "), include_dir, headers_of(include_dir),
                              kernel.source);
    if (auto cached = cache_.find(compile.key)) {
      try {
        write_artifact(index, *cached, true);
        return std::nullopt;
      } catch (const std::runtime_error&) {
        // a cached module without the names asked for: compile it again
      }
    }
    // The same program as one this batch already compiles (configs that differ only in run-time
    // knobs): that compile serves both.
    if (auto first = compiling.find(compile.key); first != compiling.end()) {
      sharers[first->second].push_back(index);
      return std::nullopt;
    }
    compiling.emplace(compile.key, index);
    measure::write_build_file(compile.stem + ".cu", kernel.source);
    std::vector<std::string> options = kernel.options;
    if (!include_dir.empty()) options.push_back("--include-path=" + include_dir);
    const nlohmann::json request = {{"source", compile.stem + ".cu"},
                                    {"program_name", kernel.program_name},
                                    {"arch", compile.arch},
                                    {"options", options},
                                    {"name_expressions", name_expressions(kernel)}};
    measure::write_build_file(compile.stem + ".request.json", request.dump());
    try {
      return measure::Subprocess::spawn({options_.nvrtc_executable, compile.stem + ".request.json",
                                         compile.stem + ".module", compile.stem + ".result.json"},
                                        {.pipe_stdio = false, .output_file = compile.stem + ".log"});
    } catch (const std::runtime_error& error) {
      throw measure::EnvironmentFailure("cannot start " + options_.nvrtc_executable + ": " + error.what() + kNothingRecorded);
    }
  };
  processes.finish = [&](std::size_t index, std::optional<measure::ExitStatus> status, double seconds) {
    const Compile& compile = compiles[index];
    measure::BuildResult& result = results[index];
    result.build_seconds = seconds;
    std::optional<CachedModule> made;  // for the inputs of the same program
    if (!status) {
      result.error = ErrorKind::kBuildError;
      result.message = fmt::format("compile timed out after {:g} s", options_.timeout_seconds);
    } else if (status->signaled) {
      result.error = ErrorKind::kBuildError;
      result.message = "NVRTC crashed: " + status->describe();
    } else if (status->code == 2) {
      throw measure::EnvironmentFailure("optune-nvrtc could not compile " + compile.stem + ".cu: " +
                                        clipped(read_text(compile.stem + ".log")) + kNothingRecorded);
    } else {
      try {
        const auto outcome = nlohmann::json::parse(read_text(compile.stem + ".result.json"));
        if (status->code != 0) {
          result.error = ErrorKind::kBuildError;
          result.message = "NVRTC: " + clipped(outcome.at("log").get<std::string>());
        } else {
          const std::string module = read_text(compile.stem + ".module");
          CachedModule compiled{std::vector<char>(module.begin(), module.end()), outcome.at("is_ptx").get<bool>(),
                                outcome.at("lowered_names").get<std::map<std::string, std::string>>(),
                                outcome.at("seconds").get<double>()};
          try {
            write_artifact(index, compiled, false);
            cache_.store(compile.key, compiled);
            made = compiled;
          } catch (const measure::EnvironmentFailure&) {
            throw;
          } catch (const std::runtime_error& error) {
            result = {"", ErrorKind::kBuildError, error.what(), 0};
          }
          result.build_seconds = seconds;
        }
      } catch (const nlohmann::json::exception& error) {
        throw measure::EnvironmentFailure("optune-nvrtc left no readable result for " + compile.stem + ".cu (" +
                                          status->describe() + "): " + error.what() + kNothingRecorded);
      }
    }
    std::error_code ignored;
    for (const char* suffix : {".cu", ".request.json", ".module", ".result.json", ".log"})
      fs::remove(compile.stem + suffix, ignored);
    // The inputs that waited for this compile: its module (at no compile cost of theirs), or its error.
    for (std::size_t sharer : sharers[index]) {
      if (!made) {
        results[sharer] = {"", result.error, result.message, 0};
        continue;
      }
      try {
        write_artifact(sharer, *made, true);
      } catch (const measure::EnvironmentFailure&) {
        throw;
      } catch (const std::runtime_error& error) {
        results[sharer] = {"", ErrorKind::kBuildError, error.what(), 0};
      }
    }
  };
  processes.run(inputs.size());
  return results;
}

}  // namespace optune::backends::cuda
