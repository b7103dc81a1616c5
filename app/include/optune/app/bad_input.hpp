// BadInput: the user's input was wrong (a malformed shape, an unknown target, an unreadable suite
// or database file). Every front end shows it as one line: the command line exits with code 2,
// the Python module raises optune.BadInput. Failures of the run itself are other exceptions.
#pragma once

#include <stdexcept>

namespace optune::app {

class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace optune::app
