#include "optune/measure/worker_operands.hpp"

#include <algorithm>
#include <limits>
#include <random>
#include <stdexcept>
#include <thread>

#include "optune/kernels/reference.hpp"
#include "optune/kernels/workload.hpp"

namespace optune::measure {
namespace {

// Random values over the type's range: floats uniform in [-1, 1) rounded to the type, integers
// uniform over every value of the type (extremes included: a kernel that saturates an
// intermediate, as AVX2's vpmaddubsw does, fails the check).
std::vector<std::byte> random_values(kernels::DataType dtype, std::size_t count, std::uint64_t seed) {
  std::vector<std::byte> bytes(count * kernels::data_type_bytes(dtype));
  std::mt19937_64 rng(seed);
  if (kernels::is_floating(dtype)) {
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    for (std::size_t i = 0; i < count; ++i) kernels::store_element(dtype, bytes.data(), i, value(rng));
    return bytes;
  }
  // Types of 32 bits and more: small values, whose sums of products stay exact.
  const auto [low, high] =
      kernels::data_type_bytes(dtype) <= 2 ? kernels::integer_range(dtype) : std::pair<double, double>{-1000, 1000};
  std::uniform_int_distribution<std::int64_t> value(static_cast<std::int64_t>(low), static_cast<std::int64_t>(high));
  for (std::size_t i = 0; i < count; ++i) kernels::store_element(dtype, bytes.data(), i, double(value(rng)));
  return bytes;
}

// Elements widened a part at a time in a check: small enough to stay in cache.
constexpr std::size_t kCheckPart = 1 << 14;

std::vector<double> widened(const HostArgument& arg) {
  std::vector<double> values(static_cast<std::size_t>(arg.spec.count));
  const std::byte* bytes = arg.initial.empty() ? arg.bytes.data() : arg.initial.data();
  kernels::load_elements(arg.spec.dtype, bytes, 0, values.size(), values.data());
  return values;
}

}  // namespace

void prepare_operator_operands(Operands& operands, const std::string& key, std::uint64_t seed,
                               const std::vector<kernels::DataType>& input_dtypes) {
  std::string id = key + " " + std::to_string(seed);
  for (kernels::DataType dtype : input_dtypes) {
    id += ' ';
    id += kernels::data_type_name(dtype);
  }
  if (operands.values.id == id) return;
  const kernels::Workload workload = kernels::parse_workload_key(key);
  if (workload.op == kernels::Op::kKernel) throw std::invalid_argument(key + ": a kernel file's operands come with its request");
  operands = Operands{};
  std::vector<std::vector<double>> inputs;
  std::uint64_t stream = seed;
  for (const auto& operand : kernels::operator_operands(workload, input_dtypes)) {
    HostArgument host;
    host.spec.name = operand.name;
    host.spec.dtype = operand.dtype;
    host.spec.count = static_cast<std::int64_t>(operand.count);
    host.spec.is_output = operand.is_output;
    if (!operand.is_output) {
      host.spec.init = kernels::BufferInit::kRandom;
      host.initial = random_values(operand.dtype, operand.count, stream++);
      inputs.push_back(widened(host));
    }
    host.bytes.resize(host.size() + kGuardBytes);
    operands.values.args.push_back(std::move(host));
  }
  std::vector<const double*> pointers;
  for (const auto& input : inputs) pointers.push_back(input.data());
  operands.reference.resize(kernels::output_size(workload));
  kernels::reference(workload, pointers, operands.reference.data());
  operands.values.id = id;
}

// An output of millions of elements is compared on several threads, a share each: on one, a 4096 x
// 4096 GEMM's check took most of a CUDA tune's checking time (docs/performance/multi-gpu.md). The
// worker times nothing meanwhile, and a share's sums are added in a fixed order (the same error
// for the same output).
double operator_output_error(const Operands& operands) {
  constexpr std::size_t kElementsPerThread = std::size_t{1} << 20;
  constexpr unsigned kMostThreads = 8;
  const HostArgument& output = operands.values.args.back();
  if (!guard_intact(output)) return std::numeric_limits<double>::infinity();
  const auto count = static_cast<std::size_t>(output.spec.count);
  const std::size_t threads = std::clamp<std::size_t>(
      count / kElementsPerThread, 1, std::clamp(std::thread::hardware_concurrency(), 1u, kMostThreads));
  std::vector<kernels::RelativeL2> shares(threads);
  auto compare = [&](std::size_t share) {
    const std::size_t begin = count * share / threads, end = count * (share + 1) / threads;
    std::vector<double> part(std::min(end - begin, kCheckPart));
    for (std::size_t first = begin; first < end; first += part.size()) {
      const std::size_t n = std::min(part.size(), end - first);
      kernels::load_elements(output.spec.dtype, output.bytes.data(), first, n, part.data());
      shares[share].add(part.data(), operands.reference.data() + first, n);
    }
  };
  {
    std::vector<std::jthread> helpers;
    for (std::size_t share = 1; share < threads; ++share) helpers.emplace_back(compare, share);
    compare(0);
  }
  kernels::RelativeL2 total;
  for (const auto& share : shares) total.add(share);
  return total.error();
}

}  // namespace optune::measure
