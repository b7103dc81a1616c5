#include "optune/measure/measure_result.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace optune::measure {
namespace {

constexpr std::array<std::pair<ErrorKind, std::string_view>, 9> kNames = {{
    {ErrorKind::kOk, "ok"},
    {ErrorKind::kBuildError, "build_error"},
    {ErrorKind::kRuntimeError, "runtime_error"},
    {ErrorKind::kTimeout, "timeout"},
    {ErrorKind::kWrongAnswer, "wrong_answer"},
    {ErrorKind::kCrash, "crash"},
    {ErrorKind::kTransportError, "transport_error"},
    {ErrorKind::kReferenceError, "reference_error"},
    {ErrorKind::kSlow, "slow"},
}};

}  // namespace

std::string_view error_kind_name(ErrorKind kind) {
  for (const auto& [k, name] : kNames)
    if (k == kind) return name;
  return "unknown";
}

ErrorKind parse_error_kind(std::string_view name) {
  for (const auto& [kind, n] : kNames)
    if (n == name) return kind;
  throw std::invalid_argument("unknown error kind '" + std::string(name) + "'");
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", seconds);
  return text;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

double unix_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace optune::measure
