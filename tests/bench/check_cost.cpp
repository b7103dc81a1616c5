// bench_check_cost: what the worker's check of an operator's output costs on the host, per output
// size and dtype: the output (the reference itself, rounded to the type, as a right candidate's
// would be) compared against the double reference by measure::operator_output_error, and the
// operands reset for a checked run (measure::reset_for_run: inputs restored, the output poisoned,
// guards refilled), medians of 9.
// A GPU tune of a 4096 x 4096 GEMM checks every candidate so (docs/performance/multi-gpu.md).
//
//   build/tests/bench/bench_check_cost [--key gemm.bf16.M4096.N4096.K64 ...]
// (K is kept small: the reference is computed once, in double, on the host.)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "optune/kernels/data_type.hpp"
#include "optune/measure/worker_operands.hpp"

int main(int argc, char** argv) {
  using namespace optune;
  std::vector<std::string> keys;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--key") keys.push_back(argv[i + 1]);
  if (keys.empty()) keys = {"gemm.bf16.M4096.N4096.K64", "gemm.f32.M4096.N4096.K64", "gemm.bf16.M1024.N1024.K64"};
  std::printf("host threads: %u\n", std::thread::hardware_concurrency());
  for (const auto& key : keys) {
    measure::Operands operands;
    measure::prepare_operator_operands(operands, key, 1, {});
    measure::reset_for_run(operands.values, 0);  // guards filled, the output poisoned
    auto& output = operands.values.args.back();
    const auto count = static_cast<std::size_t>(output.spec.count);
    for (std::size_t i = 0; i < count; ++i)
      kernels::store_element(output.spec.dtype, output.bytes.data(), i, operands.reference[i]);
    std::vector<double> seconds, reset_seconds;
    double error = 0;
    for (int r = 0; r < 9; ++r) {
      const auto start = std::chrono::steady_clock::now();
      error = measure::operator_output_error(operands);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      measure::KernelOperands copy = operands.values;
      const auto reset = std::chrono::steady_clock::now();
      measure::reset_for_run(copy, r % 2);
      reset_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - reset).count());
    }
    std::sort(seconds.begin(), seconds.end());
    std::sort(reset_seconds.begin(), reset_seconds.end());
    std::printf("%-28s %9zu elements  compare %7.2f ms, reset for a run %7.2f ms (medians of 9)  error %.3g\n",
                key.c_str(), count, seconds[4] * 1e3, reset_seconds[4] * 1e3, error);
  }
}
