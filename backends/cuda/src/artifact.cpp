#include "artifact.hpp"

#include <climits>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "optune/measure/builder.hpp"

namespace optune::backends::cuda {
namespace {

// The format's version; a reader refuses others rather than guess.
constexpr int kArtifactVersion = 3;  // 2: tensor maps; 3: run-time arguments
// A module larger than this is no candidate of ours: a damaged or hostile file.
constexpr std::size_t kMaxModuleBytes = std::size_t{1} << 30;
constexpr std::size_t kMaxRunTimeArguments = 64;

nlohmann::json launch_json(const kernels::LaunchSize& launch) {
  return {{"dimensions", launch.dimensions},
          {"grid", launch.global},
          {"block", launch.local},
          {"shared_memory_bytes", launch.shared_memory_bytes}};
}

kernels::LaunchSize launch_of(const nlohmann::json& json) {
  kernels::LaunchSize launch;
  launch.dimensions = json.at("dimensions").get<int>();
  launch.global = json.at("grid").get<std::array<std::int64_t, 3>>();
  launch.local = json.at("block").get<std::array<std::int64_t, 3>>();
  launch.shared_memory_bytes = json.at("shared_memory_bytes").get<std::int64_t>();
  if (launch.dimensions < 1 || launch.dimensions > 3) throw std::runtime_error("dimensions must be 1, 2 or 3");
  for (std::size_t d = 0; d < 3; ++d)
    if (launch.global[d] < 1 || launch.local[d] < 1 || launch.global[d] > UINT32_MAX || launch.local[d] > UINT32_MAX)
      throw std::runtime_error("grid and block sizes must be positive 32-bit numbers");
  if (launch.shared_memory_bytes < 0 || launch.shared_memory_bytes > UINT32_MAX)
    throw std::runtime_error("shared_memory_bytes out of range");
  return launch;
}

}  // namespace

void write_cuda_artifact(const CudaArtifact& artifact, const std::string& path) {
  nlohmann::json header = {
      {"format", "optune-cuda"},         {"version", kArtifactVersion},
      {"template", artifact.template_name}, {"workload", artifact.workload_key},
      {"arch", artifact.arch},           {"is_ptx", artifact.is_ptx},
      {"entry", artifact.entry},         {"reference", artifact.reference},
      {"launch", launch_json(artifact.launch)}, {"compile_seconds", artifact.compile_seconds},
      {"from_cache", artifact.from_cache}, {"module_bytes", artifact.module.size()},
      {"tensor_maps", nlohmann::json::array()}, {"run_time_arguments", artifact.run_time_arguments},
  };
  for (const auto& map : artifact.tensor_maps) header["tensor_maps"].push_back(tensor_map_json(map));
  measure::write_build_file(path, header.dump() + "\n" + std::string(artifact.module.begin(), artifact.module.end()));
}

CudaArtifact read_cuda_artifact(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read CUDA artifact " + path);
  try {
    std::string line;
    std::getline(in, line);
    const auto json = nlohmann::json::parse(line);
    if (json.at("format") != "optune-cuda" || json.at("version") != kArtifactVersion)
      throw std::runtime_error("not an optune CUDA artifact of version " + std::to_string(kArtifactVersion));
    CudaArtifact artifact;
    artifact.template_name = json.at("template").get<std::string>();
    artifact.workload_key = json.at("workload").get<std::string>();
    artifact.arch = json.at("arch").get<std::string>();
    artifact.is_ptx = json.at("is_ptx").get<bool>();
    artifact.entry = json.at("entry").get<std::string>();
    artifact.reference = json.at("reference").get<std::string>();
    artifact.launch = launch_of(json.at("launch"));
    artifact.compile_seconds = json.at("compile_seconds").get<double>();
    artifact.from_cache = json.at("from_cache").get<bool>();
    for (const auto& map : json.at("tensor_maps")) artifact.tensor_maps.push_back(tensor_map_of(map));
    const auto& run_time = json.at("run_time_arguments");
    if (!run_time.is_array() || run_time.size() > kMaxRunTimeArguments)
      throw std::runtime_error("run_time_arguments: expected at most " + std::to_string(kMaxRunTimeArguments) +
                               " 32-bit integers");
    for (const auto& value : run_time) {
      // nlohmann converts a number to int32 without a range check: check it here.
      if (!value.is_number_integer() || value.get<std::int64_t>() < INT32_MIN || value.get<std::int64_t>() > INT32_MAX ||
          (value.is_number_unsigned() && value.get<std::uint64_t>() > INT32_MAX))
        throw std::runtime_error("run_time_arguments: " + value.dump() + " is no 32-bit integer");
      artifact.run_time_arguments.push_back(value.get<std::int32_t>());
    }
    const auto bytes = json.at("module_bytes").get<std::size_t>();
    if (bytes == 0 || bytes > kMaxModuleBytes) throw std::runtime_error("module_bytes out of range");
    artifact.module.resize(bytes);
    if (!in.read(artifact.module.data(), static_cast<std::streamsize>(bytes)) || in.peek() != EOF)
      throw std::runtime_error("the module is not module_bytes long");
    return artifact;
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error("malformed CUDA artifact " + path + ": " + error.what());
  } catch (const std::runtime_error& error) {
    throw std::runtime_error("malformed CUDA artifact " + path + ": " + error.what());
  }
}

}  // namespace optune::backends::cuda
