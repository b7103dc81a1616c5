// BadInput: the user's input was wrong (a malformed shape, an unknown target, an unreadable suite
// or database file). Every front end shows it as one line: the command line exits with code 2,
// the Python module raises optune.BadInput. Failures of the run itself are other exceptions.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace optune::app {

class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A message as every front end shows it, on one line whatever it quotes (a file name or a
// kernel's text may hold line breaks): "\n" and "\r" written as escapes.
inline std::string one_line(std::string_view message) {
  std::string line;
  for (char c : message) {
    if (c == '\n') line += "\\n";
    else if (c == '\r') line += "\\r";
    else line += c;
  }
  return line;
}

}  // namespace optune::app
