#include "optune/tuner/results/toolchain_change.hpp"

namespace optune::tuner {

std::string toolchain_change(const db::TuningRecord& record, const measure::Toolchain& now) {
  if (!record.toolchain.is_object() || now.compiler.empty()) return "";
  const auto then = [&record](const char* key) { return record.toolchain.value(key, std::string()); };
  std::string change;
  const auto add = [&change](const std::string& what, const std::string& was, const std::string& is) {
    if (was == is) return;
    change += (change.empty() ? "" : "; ") + what + " " + (was.empty() ? "(none)" : was) + ", now " +
              (is.empty() ? "(none)" : is);
  };
  add("compiler", then("compiler"), now.compiler);
  add("flags", then("flags"), now.flags);
  // optune's own code generation is part of what builds a candidate: a table of an older optune
  // is held to today's as one of another compiler is.
  if (!record.optune_version.empty()) add("optune", record.optune_version, OPTUNE_VERSION);
  return change;
}

ToolchainMatch match_toolchain(const db::TuningRecord& record, const measure::Toolchain& now) {
  if (!record.toolchain.is_object() || now.compiler.empty()) return ToolchainMatch::kUnknown;
  return toolchain_change(record, now).empty() ? ToolchainMatch::kSame : ToolchainMatch::kChanged;
}

std::string toolchain_difference(const db::TuningRecord& record, const measure::Toolchain& now) {
  if (now.compiler.empty()) return "today's toolchain unknown (the builder cannot tell)";
  if (!record.toolchain.is_object()) return "toolchain unknown (recorded before schema 6), now " + now.compiler;
  return toolchain_change(record, now);
}

nlohmann::json toolchain_json(const measure::Toolchain& toolchain) {
  if (toolchain.compiler.empty()) return nullptr;
  return {{"compiler", toolchain.compiler}, {"flags", toolchain.flags}};
}

}  // namespace optune::tuner
