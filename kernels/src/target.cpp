#include "optune/kernels/target.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "trim.hpp"

namespace optune::kernels {

Target split_target(std::string_view raw) {
  const std::string_view text = trim(raw);
  const auto colon = text.find(':');
  Target target;
  target.backend = std::string(trim(text.substr(0, colon)));
  const bool word = !target.backend.empty() && std::all_of(target.backend.begin(), target.backend.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!word) throw std::invalid_argument("target: no backend name in '" + std::string(text) + "'");
  target.spec = colon == std::string_view::npos ? "" : std::string(trim(text.substr(colon + 1)));
  if (colon != std::string_view::npos && target.spec.empty())
    throw std::invalid_argument("target: nothing after ':' in '" + std::string(text) + "'");
  return target;
}

}  // namespace optune::kernels
