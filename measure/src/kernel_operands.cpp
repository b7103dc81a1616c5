#include "optune/measure/kernel_operands.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>

namespace optune::measure {
namespace {

using kernels::BufferInit;
using kernels::DataType;

constexpr std::byte kGuardByte{0xCD};
constexpr std::byte kIntegerPoison[2] = {std::byte{0xA5}, std::byte{0x5A}};

// The largest operands a worker makes for one kernel: beyond it allocation would take the
// machine down rather than fail.
constexpr double kMaxOperandBytes = 16.0 * (1ull << 30);

using kernels::load_element;
using kernels::store_element;

std::vector<std::byte> initial_values(const KernelArgument& arg, std::uint64_t seed) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(arg.count) * kernels::data_type_bytes(arg.dtype));
  const BufferInit init = arg.init.value_or(BufferInit::kZeros);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> integer(0, 99);
  const bool floating = kernels::is_floating(arg.dtype);
  for (std::size_t i = 0; i < static_cast<std::size_t>(arg.count); ++i) {
    double value = 0;
    switch (init) {
      case BufferInit::kRandom: value = floating ? real(rng) : integer(rng); break;
      case BufferInit::kZeros: value = 0; break;
      case BufferInit::kOnes: value = 1; break;
      case BufferInit::kIota: value = static_cast<double>(i); break;
    }
    store_element(arg.dtype, bytes.data(), i, value);
  }
  return bytes;
}

// A file of raw values for an argument: exactly its elements. `field` names it in messages.
std::vector<std::byte> read_values_file(const std::string& path, const HostArgument& output, const std::string& field) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(field + ": cannot read " + path);
  std::vector<std::byte> bytes(output.size());
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (in.gcount() != static_cast<std::streamsize>(bytes.size()) || in.peek() != std::char_traits<char>::eof())
    throw std::runtime_error(field + ": " + path + " does not hold exactly " + std::to_string(output.size()) +
                             " bytes (" + output.spec.name + ")");
  return bytes;
}

std::string overrun_message(const KernelOperands& operands) {
  for (const auto& arg : operands.args)
    if (arg.spec.is_buffer && !guard_intact(arg)) return "wrote past the end of argument '" + arg.spec.name + "'";
  return "";
}

std::string format_value(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

}  // namespace

KernelOperandsSpec kernel_operands_spec(const kernels::KernelProblem& problem, const std::string& reference_source,
                                        const std::string& reference_build_options) {
  KernelOperandsSpec spec;
  for (const auto& arg : problem.args())
    spec.args.push_back({arg.name, arg.dtype, arg.is_buffer(), arg.count, arg.value, arg.init, arg.is_output,
                         arg.data.string()});
  const kernels::KernelCheck& check = problem.spec().check;
  spec.check.kind = check.kind;
  spec.check.rtol = check.rtol;
  spec.check.atol = check.atol;
  if (check.kind == kernels::KernelCheck::Kind::kReference) {
    spec.check.entry = check.reference;
    spec.check.source = reference_source;
    spec.check.build_options = reference_build_options;
    if (problem.reference_launch()) spec.check.launch = *problem.reference_launch();
  }
  for (const auto& file : check.expected) spec.check.expected_files.push_back(file.string());
  return spec;
}

void to_json(nlohmann::json& json, const KernelOperandsSpec& spec) {
  json = nlohmann::json::object();
  auto& args = json["args"] = nlohmann::json::array();
  for (const auto& arg : spec.args) {
    nlohmann::json item = {{"name", arg.name}, {"dtype", kernels::data_type_name(arg.dtype)},
                           {"kind", arg.is_buffer ? "buffer" : "scalar"}};
    if (arg.is_buffer) item["count"] = arg.count;
    else item["value"] = arg.value;
    if (arg.init) item["init"] = kernels::buffer_init_name(*arg.init);
    if (arg.is_output) item["output"] = true;
    if (!arg.data_file.empty()) item["data"] = arg.data_file;
    args.push_back(std::move(item));
  }
  const KernelCheckSpec& check = spec.check;
  static constexpr const char* kKinds[] = {"none", "reference", "expected"};
  nlohmann::json c = {{"kind", kKinds[static_cast<int>(check.kind)]}, {"rtol", check.rtol}, {"atol", check.atol}};
  if (!check.entry.empty()) c["entry"] = check.entry;
  if (!check.source.empty()) c["source"] = check.source;
  if (!check.build_options.empty()) c["build_options"] = check.build_options;
  if (check.kind == kernels::KernelCheck::Kind::kReference) {
    const auto& l = check.launch;
    c["launch"] = {{"dimensions", l.dimensions}, {"global", l.global}, {"local", l.local}, {"has_local", l.has_local}};
    // Only grid/block launches have it: written when set, so other launches' JSON (and the
    // operands' id, which is made of it) stays as it was.
    if (l.shared_memory_bytes != 0) c["launch"]["shared_memory_bytes"] = l.shared_memory_bytes;
  }
  if (!check.expected_files.empty()) c["expected_files"] = check.expected_files;
  json["check"] = std::move(c);
}

void from_json(const nlohmann::json& json, KernelOperandsSpec& spec) {
  spec = KernelOperandsSpec{};
  for (const auto& item : json.at("args")) {
    KernelArgument arg;
    arg.name = item.at("name").get<std::string>();
    arg.dtype = kernels::parse_data_type(item.at("dtype").get<std::string>());
    arg.is_buffer = item.at("kind").get<std::string>() == "buffer";
    if (arg.is_buffer) {
      arg.count = item.at("count").get<std::int64_t>();
      if (arg.count < 1) throw std::invalid_argument("kernel argument " + arg.name + ": count must be positive");
    } else {
      arg.value = item.at("value").get<double>();
    }
    if (item.contains("init")) arg.init = kernels::parse_buffer_init(item.at("init").get<std::string>());
    arg.is_output = item.value("output", false);
    arg.data_file = item.value("data", "");
    spec.args.push_back(std::move(arg));
  }
  const auto& c = json.at("check");
  const std::string kind = c.at("kind").get<std::string>();
  if (kind == "none") spec.check.kind = kernels::KernelCheck::Kind::kNone;
  else if (kind == "reference") spec.check.kind = kernels::KernelCheck::Kind::kReference;
  else if (kind == "expected") spec.check.kind = kernels::KernelCheck::Kind::kExpected;
  else throw std::invalid_argument("kernel check kind '" + kind + "' is not none, reference or expected");
  spec.check.rtol = c.at("rtol").get<double>();
  spec.check.atol = c.at("atol").get<double>();
  spec.check.entry = c.value("entry", "");
  spec.check.source = c.value("source", "");
  spec.check.build_options = c.value("build_options", "");
  if (c.contains("launch")) {
    const auto& l = c.at("launch");
    spec.check.launch.dimensions = l.at("dimensions").get<int>();
    spec.check.launch.global = l.at("global").get<std::array<std::int64_t, 3>>();
    spec.check.launch.local = l.at("local").get<std::array<std::int64_t, 3>>();
    spec.check.launch.has_local = l.at("has_local").get<bool>();
    spec.check.launch.shared_memory_bytes = l.value("shared_memory_bytes", std::int64_t{0});
  }
  spec.check.expected_files = c.value("expected_files", std::vector<std::string>{});
}

bool guard_intact(const HostArgument& arg) {
  for (std::size_t i = arg.size(); i < arg.bytes.size(); ++i)
    if (arg.bytes[i] != kGuardByte) return false;
  return true;
}

std::size_t HostArgument::size() const {
  return spec.is_buffer ? static_cast<std::size_t>(spec.count) * kernels::data_type_bytes(spec.dtype)
                        : kernels::data_type_bytes(spec.dtype);
}

void prepare_kernel_operands(KernelOperands& operands, const std::string& workload_key, std::uint64_t seed,
                             const KernelOperandsSpec& spec) {
  const std::string id = workload_key + " " + std::to_string(seed) + " " + nlohmann::json(spec).dump();
  if (operands.id == id) return;
  operands = KernelOperands{};
  double total = 0;
  for (const auto& arg : spec.args)
    if (arg.is_buffer) total += double(arg.count) * double(kernels::data_type_bytes(arg.dtype));
  if (total > kMaxOperandBytes)
    throw std::runtime_error("the kernel's buffers need " + std::to_string(total / double(1ull << 30)) +
                             " GiB, more than the worker's limit");
  std::uint64_t stream = seed;
  for (const auto& arg : spec.args) {
    HostArgument host{arg, {}, {}};
    if (arg.is_buffer) {
      if (!arg.data_file.empty()) host.initial = read_values_file(arg.data_file, host, "args." + arg.name + ".data");
      else if (arg.init) host.initial = initial_values(arg, stream++);
      host.bytes.resize(host.size() + kGuardBytes);
    } else {
      host.bytes.resize(host.size());
      store_element(arg.dtype, host.bytes.data(), 0, arg.value);
    }
    operands.args.push_back(std::move(host));
  }
  operands.check = spec.check;
  if (spec.check.kind == kernels::KernelCheck::Kind::kExpected) {
    std::size_t file = 0;
    for (const auto& arg : operands.args) {
      if (!arg.spec.is_output) continue;
      if (file >= spec.check.expected_files.size())
        throw std::runtime_error("check.expected: no file for output '" + arg.spec.name + "'");
      operands.expected.push_back(read_values_file(spec.check.expected_files[file++], arg, "check.expected"));
    }
  }
  operands.id = id;
}

void reset_for_run(KernelOperands& operands, int poison_pattern) {
  for (auto& arg : operands.args) {
    if (!arg.spec.is_buffer) continue;
    if (!arg.initial.empty()) {
      std::memcpy(arg.bytes.data(), arg.initial.data(), arg.initial.size());
    } else if (kernels::is_floating(arg.spec.dtype)) {
      // Two NaNs with different payloads: a float output left unwritten is NaN either way.
      const double nan = poison_pattern == 0 ? std::numeric_limits<double>::quiet_NaN() : -std::numeric_limits<double>::quiet_NaN();
      kernels::fill_elements(arg.spec.dtype, arg.bytes.data(), static_cast<std::size_t>(arg.spec.count), nan);
    } else {
      std::fill_n(arg.bytes.begin(), arg.size(), kIntegerPoison[poison_pattern & 1]);
    }
    std::fill(arg.bytes.begin() + static_cast<std::ptrdiff_t>(arg.size()), arg.bytes.end(), kGuardByte);
  }
}

std::vector<void*> argument_pointers(KernelOperands& operands) {
  std::vector<void*> pointers;
  for (auto& arg : operands.args) pointers.push_back(arg.bytes.data());
  return pointers;
}

std::vector<std::vector<std::byte>> output_bytes(const KernelOperands& operands) {
  std::vector<std::vector<std::byte>> outputs;
  for (const auto& arg : operands.args)
    if (arg.spec.is_output) outputs.emplace_back(arg.bytes.begin(), arg.bytes.begin() + static_cast<std::ptrdiff_t>(arg.size()));
  return outputs;
}

std::string take_reference_outputs(KernelOperands& operands) {
  if (std::string overrun = overrun_message(operands); !overrun.empty()) return overrun;
  operands.expected = output_bytes(operands);
  return "";
}

OutputCheck check_outputs(const KernelOperands& operands) {
  OutputCheck result;
  if (std::string overrun = overrun_message(operands); !overrun.empty()) {
    result.max_error = std::numeric_limits<double>::infinity();
    result.message = overrun;
    return result;
  }
  const double rtol = operands.check.rtol, atol = operands.check.atol;
  std::size_t output = 0;
  std::string first;
  std::size_t wrong = 0, total = 0;
  for (const auto& arg : operands.args) {
    if (!arg.spec.is_output) continue;
    const std::vector<std::byte>& expected = operands.expected.at(output++);
    for (std::size_t i = 0; i < static_cast<std::size_t>(arg.spec.count); ++i, ++total) {
      const double out = load_element(arg.spec.dtype, arg.bytes.data(), i);
      const double ref = load_element(arg.spec.dtype, expected.data(), i);
      const double allowed = atol + rtol * std::fabs(ref);
      const double diff = std::fabs(out - ref);
      const double error = std::isnan(diff) ? std::numeric_limits<double>::infinity()
                           : allowed > 0   ? diff / allowed
                           : diff > 0      ? std::numeric_limits<double>::infinity()
                                           : 0.0;
      result.max_error = std::max(result.max_error, error);
      if (std::isnan(diff) || diff > allowed) {
        if (wrong++ == 0)
          first = arg.spec.name + "[" + std::to_string(i) + "] = " + format_value(out) + ", expected " +
                  format_value(ref) + " (atol " + format_value(atol) + ", rtol " + format_value(rtol) + ")" +
                  // The output is poisoned with NaN before the reference runs too.
                  (std::isnan(ref) && !std::isnan(out) && operands.check.kind == kernels::KernelCheck::Kind::kReference
                       ? ": the reference left it unwritten or computed NaN"
                       : "");
      }
    }
  }
  result.passed = wrong == 0;
  if (!result.passed)
    result.message = first + "; " + std::to_string(wrong) + " of " + std::to_string(total) + " output elements differ";
  return result;
}

OutputCheck check_written(const KernelOperands& operands, const std::vector<std::vector<std::byte>>& previous) {
  OutputCheck result;
  if (std::string overrun = overrun_message(operands); !overrun.empty()) {
    result.max_error = std::numeric_limits<double>::infinity();
    result.message = overrun;
    return result;
  }
  const auto current = output_bytes(operands);
  std::size_t output = 0;
  for (const auto& arg : operands.args) {
    if (!arg.spec.is_output) continue;
    const auto& now = current[output];
    const auto& before = previous.at(output++);
    const std::size_t width = kernels::data_type_bytes(arg.spec.dtype);
    for (std::size_t i = 0; i < static_cast<std::size_t>(arg.spec.count); ++i) {
      const bool nan = kernels::is_floating(arg.spec.dtype) && std::isnan(load_element(arg.spec.dtype, now.data(), i));
      if (nan || std::memcmp(now.data() + i * width, before.data() + i * width, width) != 0) {
        result.max_error = std::numeric_limits<double>::infinity();
        result.message = arg.spec.name + "[" + std::to_string(i) + "] is " +
                         (nan ? "not written (NaN)" : "not written, or differs between two runs");
        return result;
      }
    }
  }
  result.passed = true;
  return result;
}

}  // namespace optune::measure
