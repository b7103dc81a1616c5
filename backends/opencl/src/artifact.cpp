#include "optune/backends/opencl/artifact.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "optune/measure/builder.hpp"

namespace optune::measure {

// Format version 1; a reader refuses others rather than guess.
constexpr int kArtifactFormat = 1;

void write_opencl_artifact(const OpenCLArtifact& artifact, const std::string& path) {
  const auto& k = artifact.kernel;
  const nlohmann::json json = {
      {"format", "optune-opencl"},
      {"version", kArtifactFormat},
      {"template", artifact.template_name},
      {"workload", artifact.workload_key},
      {"source_file", k.source_file},
      {"kernel", k.kernel_name},
      {"build_options", k.build_options},
      {"dimensions", k.dimensions},
      {"global_size", k.global_size},
      {"local_size", k.local_size},
      {"scratch_bytes", k.scratch_bytes},
      {"source", artifact.source},
  };
  write_build_file(path, json.dump() + "\n");
}

OpenCLArtifact read_opencl_artifact(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read OpenCL artifact " + path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    const auto json = nlohmann::json::parse(text.str());
    if (json.at("format") != "optune-opencl" || json.at("version") != kArtifactFormat)
      throw std::runtime_error("not an optune OpenCL artifact of version 1");
    OpenCLArtifact artifact;
    artifact.template_name = json.at("template").get<std::string>();
    artifact.workload_key = json.at("workload").get<std::string>();
    artifact.kernel.source_file = json.at("source_file").get<std::string>();
    artifact.kernel.kernel_name = json.at("kernel").get<std::string>();
    artifact.kernel.build_options = json.at("build_options").get<std::string>();
    artifact.kernel.dimensions = json.at("dimensions").get<int>();
    artifact.kernel.global_size = json.at("global_size").get<std::array<std::size_t, 3>>();
    artifact.kernel.local_size = json.at("local_size").get<std::array<std::size_t, 3>>();
    artifact.kernel.scratch_bytes = json.value("scratch_bytes", std::size_t{0});  // absent in artifacts before it
    artifact.source = json.at("source").get<std::string>();
    if (artifact.kernel.dimensions < 1 || artifact.kernel.dimensions > 3)
      throw std::runtime_error("dimensions must be 1, 2 or 3");
    return artifact;
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error("malformed OpenCL artifact " + path + ": " + error.what());
  } catch (const std::runtime_error& error) {
    throw std::runtime_error("malformed OpenCL artifact " + path + ": " + error.what());
  }
}

}  // namespace optune::measure
