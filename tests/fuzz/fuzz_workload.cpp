// Workload keys (as records, imports and RPC requests carry them) and `--shape` strings (as users
// type them). Input: "<op>\n<shape>" is tried as a shape of that op and the whole as a key.
// Promises: parsers throw only std::invalid_argument; whatever parses is valid, has a positive
// finite flop count (a kernel file's key: 0, its work unknown without the file), and its key
// parses back to the same workload.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz_support.hpp"
#include "optune/kernels/workload.hpp"

using namespace optune::kernels;

namespace {

void check_parsed(const Workload& workload, const std::string& from) {
  try {
    validate_workload(workload);
  } catch (const std::invalid_argument& error) {
    optune::fuzz::broken(from + " parsed into an invalid workload: " + error.what());
  }
  // A kernel file's work per run is the file's, unknown from its key alone (KernelShape::work: 0).
  const double flops = workload.flops();
  const bool known = workload.op != optune::kernels::Op::kKernel;
  if (!(std::isfinite(flops) && (known ? flops > 0 : flops == 0)))
    optune::fuzz::broken(from + " has flops " + std::to_string(flops));
  const std::string key = workload.key();
  Workload again;
  try {
    again = parse_workload_key(key);
  } catch (const std::invalid_argument& error) {
    optune::fuzz::broken("the key " + key + " of " + from + " does not parse: " + error.what());
  }
  if (!(again == workload)) optune::fuzz::broken("the key " + key + " of " + from + " parses to another workload");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    check_parsed(parse_workload_key(text), "a key");
  } catch (const std::invalid_argument&) {
  }
  const auto newline = text.find('\n');
  if (newline == std::string::npos) return 0;
  Op op;
  try {
    op = parse_op(text.substr(0, newline));
  } catch (const std::invalid_argument&) {
    return 0;
  }
  try {
    check_parsed(parse_workload(op, text.substr(newline + 1)), "a shape");
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
