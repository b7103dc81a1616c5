#include <fmt/format.h>

#include "optune/backends/cpu/local_builder.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include "optune/kernels/cpu/candidate.hpp"
#include "optune/measure/parallel_processes.hpp"
#include "optune/measure/subprocess.hpp"
#include "precompiled_headers.hpp"

namespace optune::measure {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

// Compiler output kept in a build_error record: the first errors are the useful ones.
constexpr std::size_t kMaxMessageBytes = 4000;
constexpr const char* kNotTheCandidates = "build_error of the environment, not of the candidates: ";
constexpr const char* kNothingRecorded = "; nothing of the batch recorded (fix the environment and run again)";

std::string read_text(const std::string& path, std::size_t limit) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > limit) text = text.substr(0, limit) + "\n[...]";
  return text;
}

// Why a failed compile is the environment's and not the candidate's, or "" where it is the
// candidate's. A compiler that rejects a candidate says why; one that fails without a word was
// killed or could not write its output (the log included), and one that ran out of disk space
// would have failed any candidate.
std::string environment_cause(const std::string& output) {
  if (output.find_first_not_of(" \t\r\n") == std::string::npos) return "the compiler failed without a message";
  for (const int error : {ENOSPC, EDQUOT, EFBIG, EROFS})
    if (output.find(std::strerror(error)) != std::string::npos) return std::strerror(error);
  return "";
}

// The compiler's first error line: what a one-line message quotes of its output.
std::string first_error(const std::string& output) {
  std::istringstream lines(output);
  std::string first;
  for (std::string line; std::getline(lines, line);) {
    if (first.empty()) first = line;
    if (line.find("error") != std::string::npos) return line;
  }
  return first;
}

// A compiler started on `argv`, its output in `log`. A compiler that cannot start, or has no room
// for its log, is no candidate's fault.
Subprocess start_compiler(const std::vector<std::string>& argv, const std::string& log) {
  try {
    return Subprocess::spawn(argv, {.pipe_stdio = false, .output_file = log});
  } catch (const std::runtime_error& error) {
    throw EnvironmentFailure(kNotTheCandidates + std::string(error.what()) + kNothingRecorded);
  }
}

// A candidate's compile: its command and files.
struct PendingCompile {
  std::vector<std::string> argv;
  std::string stem;  // work_dir/candidate_N: .cpp, .so and .log
  std::string source;  // written to stem.cpp as its compile starts (a full disk fails that compile)
  bool has_reference = false;  // the source marks its check reference's part (kWithoutReferenceMacro)
};

// Whether the candidate of `compile` builds without its check reference's part, within `timeout`;
// the object is not kept.
bool builds_without_reference(const PendingCompile& compile, double timeout_seconds) {
  std::vector<std::string> argv = compile.argv;
  argv.insert(argv.begin() + 1, std::string("-D") + kernels::kWithoutReferenceMacro);
  argv.back() = compile.stem + ".without_reference.so";
  Subprocess compiler = start_compiler(argv, compile.stem + ".without_reference.log");
  const auto status = compiler.wait_until(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                             std::chrono::duration<double>(timeout_seconds)));
  if (!status) compiler.kill();
  std::error_code ignored;
  fs::remove(argv.back(), ignored);
  fs::remove(compile.stem + ".without_reference.log", ignored);
  return status && status->exited && status->code == 0;
}

}  // namespace

Toolchain LocalBuilder::toolchain(const kernels::DeviceInfo& /*device*/) const {
  if (!compiler_version_) {
    // "c++ (Debian 12.2.0-14) 12.2.0": what `--version` says first, GCC's and Clang's alike. A
    // compiler that cannot say is named alone.
    compiler_version_ = options_.compiler;
    try {
      Subprocess version = Subprocess::spawn({options_.compiler, "--version"}, {.pipe_stdio = true, .output_file = ""});
      if (auto line = version.read_line(std::chrono::steady_clock::now() + std::chrono::seconds(10)); line && !line->empty())
        compiler_version_ = *line;
      version.kill();
    } catch (const std::runtime_error&) {  // a compiler that cannot start fails the build, not this
    }
  }
  std::string flags;
  for (const auto& flag : options_.flags) flags += (flags.empty() ? "" : " ") + flag;
  return {*compiler_version_, flags};
}

LocalBuilder::LocalBuilder(LocalBuilderOptions options)
    : options_(std::move(options)), work_dir_(options_.work_dir, "build") {
  if (options_.jobs <= 0) options_.jobs = std::max(1u, std::thread::hardware_concurrency());
  if (options_.precompiled_headers)
    headers_ = std::make_unique<PrecompiledHeaders>(work_dir_.path(), options_.timeout_seconds);
}

LocalBuilder::~LocalBuilder() = default;

void LocalBuilder::forget_oldest_objects() {
  while (built_order_.size() > kMaxKeptObjects) {
    const auto oldest = built_.find(built_order_.front());
    std::error_code ignored;
    if (oldest != built_.end()) {
      fs::remove(oldest->second, ignored);
      built_.erase(oldest);
    }
    built_order_.pop_front();
  }
}

std::vector<BuildResult> LocalBuilder::build(const std::vector<MeasureInput>& inputs) {
  forget_oldest_objects();
  std::vector<BuildResult> results(inputs.size());
  std::vector<PendingCompile> compiles(inputs.size());
  // What each input compiles: its command (less the file names) and source. An input whose
  // compile was built before reuses that object; of inputs sharing a compile in this batch only
  // the first compiles, and the others take its result.
  std::vector<std::string> keys(inputs.size());
  std::vector<std::size_t> to_compile;
  std::map<std::string, std::size_t> first_with_key;
  std::vector<std::optional<std::size_t>> same_as(inputs.size());
  for (std::size_t index = 0; index < inputs.size(); ++index) {
    const MeasureInput& input = inputs[index];
    std::string source;
    try {
      search_space::ConfigView view(input.task->space, input.config);
      source = input.task->kernel_template->emit_source(input.task->workload, input.task->device, view);
    } catch (const std::exception& error) {
      results[index] = {"", ErrorKind::kBuildError, std::string("emit: ") + error.what(), 0};
      continue;
    }
    PendingCompile& compile = compiles[index];
    compile.argv = {options_.compiler};
    compile.argv.insert(compile.argv.end(), options_.flags.begin(), options_.flags.end());
    for (const auto& dir : options_.include_dirs) compile.argv.push_back("-I" + dir);
    for (auto& flag : input.task->kernel_template->compiler_flags(input.task->workload, input.task->device))
      compile.argv.push_back(std::move(flag));
    for (const auto& word : compile.argv) keys[index] += word + '\0';
    keys[index] += source;
    compile.has_reference = source.find(kernels::kWithoutReferenceMacro) != std::string::npos;
    if (const auto built = built_.find(keys[index]); built != built_.end() && fs::exists(built->second)) {
      results[index] = {built->second, ErrorKind::kOk, "", 0, true};
      continue;
    }
    if (const auto first = first_with_key.find(keys[index]); first != first_with_key.end()) {
      same_as[index] = first->second;
      continue;
    }
    first_with_key.emplace(keys[index], index);
    // The template's header precompiled, its folder searched before the others.
    if (headers_)
      if (auto dir = headers_->include_dir(compile.argv, source))
        compile.argv.insert(compile.argv.begin() + 1 + std::ptrdiff_t(options_.flags.size()), "-I" + *dir);
    compile.stem = work_dir_.path() + "/candidate_" + std::to_string(next_id_++);
    compile.argv.insert(compile.argv.end(), {compile.stem + ".cpp", "-o", compile.stem + ".so"});
    compile.source = std::move(source);
    to_compile.push_back(index);
  }

  ParallelProcesses processes;
  processes.jobs = options_.jobs;
  processes.timeout_seconds = options_.timeout_seconds;
  processes.start = [&](std::size_t task) -> std::optional<Subprocess> {
    PendingCompile& compile = compiles[to_compile[task]];
    write_build_file(compile.stem + ".cpp", compile.source);
    std::string().swap(compile.source);
    return start_compiler(compile.argv, compile.stem + ".log");
  };
  processes.finish = [&](std::size_t task, std::optional<ExitStatus> status, double seconds) {
    const std::size_t index = to_compile[task];
    const PendingCompile& compile = compiles[index];
    BuildResult& result = results[index];
    result.build_seconds = seconds;
    if (!status) {
      result.error = ErrorKind::kBuildError;
      result.message = fmt::format("compile timed out after {:g} s", options_.timeout_seconds);
    } else if (!status->exited || status->code != 0) {
      const std::string output = read_text(compile.stem + ".log", kMaxMessageBytes);
      if (const std::string cause = environment_cause(output); !cause.empty())
        throw EnvironmentFailure(kNotTheCandidates + std::string("compiling ") + compile.stem + ".cpp: " + cause +
                                 " (compiler " + status->describe() + ")" + kNothingRecorded);
      if (compile.has_reference && builds_without_reference(compile, options_.timeout_seconds)) {
        // The kernel file's fault, not this candidate's: the tuner stops on it as bad input.
        result.error = ErrorKind::kReferenceError;
        result.message = "the check's reference does not build (the candidate builds without it): " + first_error(output);
      } else {
        result.error = ErrorKind::kBuildError;
        result.message = "compiler " + status->describe() + ":\n" + output;
      }
    } else {
      result.artifact = compile.stem + ".so";
      result.kept = true;
      built_.emplace(keys[index], result.artifact);
      built_order_.push_back(keys[index]);
    }
    std::error_code ignored;
    fs::remove(compile.stem + ".log", ignored);
    if (!options_.keep_sources) fs::remove(compile.stem + ".cpp", ignored);
  };
  processes.run(to_compile.size());
  for (std::size_t index = 0; index < inputs.size(); ++index)
    if (same_as[index]) {
      results[index] = results[*same_as[index]];
      results[index].build_seconds = 0;  // its compile is the first's
    }
  return results;
}

}  // namespace optune::measure
