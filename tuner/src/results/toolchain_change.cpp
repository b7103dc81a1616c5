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
  return change;
}

}  // namespace optune::tuner
