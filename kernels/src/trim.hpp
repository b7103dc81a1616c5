// Whitespace trimming shared by the parsers of shapes and targets.
#pragma once

#include <string_view>

namespace optune::kernels {

inline std::string_view trim(std::string_view text) {
  constexpr std::string_view kWhitespace = " \t\r\n";
  const auto first = text.find_first_not_of(kWhitespace);
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(kWhitespace);
  return text.substr(first, last - first + 1);
}

}  // namespace optune::kernels
