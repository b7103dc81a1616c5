#include "optune/measure/worker_messages.hpp"

#include <cmath>
#include <stdexcept>

namespace optune::measure {

void to_json(nlohmann::json& json, const WorkerRequest& request) {
  json = {{"workload", request.workload}, {"timing", to_json(request.timing)}, {"seed", request.seed},
          {"target", request.target}};
  if (!request.cache_dir.empty()) json["cache_dir"] = request.cache_dir;
  if (!request.artifact.empty()) json["artifact"] = request.artifact;
  if (request.reference) json["reference"] = true;
  if (request.kernel) json["kernel"] = *request.kernel;
  if (!request.input_dtypes.empty()) {
    nlohmann::json names = nlohmann::json::array();
    for (kernels::DataType dtype : request.input_dtypes) names.push_back(kernels::data_type_name(dtype));
    json["input_dtypes"] = names;
  }
  if (request.best_seconds) json["best_seconds"] = *request.best_seconds;
  if (!request.run_time_knobs.empty()) json["run_time_knobs"] = request.run_time_knobs;
}

void from_json(const nlohmann::json& json, WorkerRequest& request) {
  request = WorkerRequest{};
  request.workload = json.at("workload").get<std::string>();
  request.timing = timing_policy_from_json(json.at("timing"));
  request.seed = json.value("seed", request.seed);
  request.target = json.value("target", request.target);
  request.cache_dir = json.value("cache_dir", "");
  request.artifact = json.value("artifact", "");
  request.reference = json.value("reference", false);
  if (json.contains("kernel")) request.kernel = json.at("kernel").get<KernelOperandsSpec>();
  if (json.contains("input_dtypes"))
    for (const auto& name : json.at("input_dtypes")) request.input_dtypes.push_back(kernels::parse_data_type(name.get<std::string>()));
  if (json.contains("best_seconds")) {
    const double best = json.at("best_seconds").get<double>();
    if (!(best > 0) || !std::isfinite(best)) throw std::invalid_argument("best_seconds must be a positive number");
    request.best_seconds = best;
  }
  if (json.contains("run_time_knobs")) request.run_time_knobs = json.at("run_time_knobs").get<std::vector<long long>>();
}

void to_json(nlohmann::json& json, const DescribeRequest& request) {
  json = {{"describe", true}};
  if (request.target) json["target"] = *request.target;
}

void from_json(const nlohmann::json& json, DescribeRequest& request) {
  request.target.reset();
  if (json.contains("target")) request.target = json.at("target").get<std::string>();
}

bool is_describe_request(const nlohmann::json& json) {
  return json.is_object() && json.value("describe", false);
}

void to_json(nlohmann::json& json, const Transfers& t) {
  json = {{"write_seconds", t.write_seconds}, {"read_seconds", t.read_seconds},
          {"write_bytes", t.write_bytes}, {"read_bytes", t.read_bytes}};
}

void from_json(const nlohmann::json& json, Transfers& t) {
  t.write_seconds = json.value("write_seconds", 0.0);
  t.read_seconds = json.value("read_seconds", 0.0);
  t.write_bytes = json.value("write_bytes", 0.0);
  t.read_bytes = json.value("read_bytes", 0.0);
}

void to_json(nlohmann::json& json, const WorkerReply& reply) {
  json = {{"status", reply.status}};
  if (!reply.message.empty()) json["message"] = reply.message;
  if (!reply.costs.empty()) json["costs"] = reply.costs;
  if (reply.error) json["error"] = *reply.error;
  if (reply.number > 0) json["number"] = reply.number;
  if (reply.check_seconds) json["check_seconds"] = *reply.check_seconds;
  if (reply.timing_seconds) json["timing_seconds"] = *reply.timing_seconds;
  if (reply.build_seconds > 0) json["build_seconds"] = reply.build_seconds;
  if (reply.program_cached) json["program_cached"] = *reply.program_cached;
  if (reply.needs_reference) json["needs_reference"] = *reply.needs_reference;
  if (reply.transfer) json["transfer"] = *reply.transfer;
  if (reply.replace_worker) json["replace_worker"] = *reply.replace_worker;
  if (reply.load) json["load"] = *reply.load;
  if (reply.device_load) json["device_load"] = *reply.device_load;
  if (reply.device) json["device"] = *reply.device;
  if (reply.devices) json["devices"] = *reply.devices;
}

void from_json(const nlohmann::json& json, WorkerReply& reply) {
  reply = WorkerReply{};
  reply.status = json.at("status").get<std::string>();
  reply.message = json.value("message", "");
  if (json.contains("costs")) reply.costs = json.at("costs").get<std::vector<double>>();
  if (json.contains("error")) reply.error = json.at("error").get<double>();
  reply.number = json.value("number", 0);
  if (json.contains("check_seconds")) reply.check_seconds = json.at("check_seconds").get<double>();
  if (json.contains("timing_seconds")) reply.timing_seconds = json.at("timing_seconds").get<double>();
  reply.build_seconds = json.value("build_seconds", 0.0);
  if (json.contains("program_cached")) reply.program_cached = json.at("program_cached").get<bool>();
  if (json.contains("needs_reference")) reply.needs_reference = json.at("needs_reference").get<bool>();
  if (json.contains("transfer")) reply.transfer = json.at("transfer").get<Transfers>();
  if (json.contains("replace_worker")) reply.replace_worker = json.at("replace_worker").get<bool>();
  if (json.contains("load")) reply.load = json.at("load").get<double>();
  if (json.contains("device_load")) reply.device_load = json.at("device_load").get<double>();
  if (json.contains("device")) reply.device = json.at("device");
  if (json.contains("devices")) reply.devices = json.at("devices").get<std::vector<nlohmann::json>>();
}

WorkerReply failure_reply(std::string status, std::string message) {
  WorkerReply reply;
  reply.status = std::move(status);
  reply.message = std::move(message);
  return reply;
}

}  // namespace optune::measure
