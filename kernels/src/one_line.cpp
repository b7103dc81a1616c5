#include "optune/kernels/one_line.hpp"

namespace optune::kernels {

std::string one_line(std::string_view message) {
  static const char* kHex = "0123456789abcdef";
  std::string line;
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') line += "\\n";
    else if (c == '\r') line += "\\r";
    else if (c == '\t') line += "\\t";
    else if (byte < 0x20 || byte == 0x7f) line += std::string("\\x") + kHex[byte >> 4] + kHex[byte & 0xf];
    else line += c;
  }
  return line;
}

}  // namespace optune::kernels
