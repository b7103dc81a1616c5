// An error message about a file or an input, as one line whole: the input's own text quoted in it
// (a quoted value holding a newline, the character toml++ saw, a name holding a NUL) has its
// control characters written as escapes ("\n", "\x00"). A NUL left in would cut the message where
// C strings end (std::exception::what(), printf).
#pragma once

#include <string>
#include <string_view>

namespace optune::kernels {

std::string one_line(std::string_view message);

}  // namespace optune::kernels
