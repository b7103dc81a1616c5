// The text an OpenCL program is built from: a kernel file with the files it includes
// (`#include "split_k.cl"`) pasted in, so that a program is one text and needs no include path
// (the worker gets it over RPC; the Runtime builds from the sources compiled into the library).
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace optune::opencl {

// `text` with every line `#include "NAME"` replaced by read(NAME), itself expanded the same way;
// each file is pasted once (a second include of it is dropped). Throws std::runtime_error for an
// include nested deeper than 8, which only a cycle makes.
std::string with_includes(std::string_view text, const std::function<std::string(const std::string&)>& read);

}  // namespace optune::opencl
