// How the dot-product GEMMs (gemm_int8.hpp, gemm_bf16.hpp) cover a row panel of fewer than MR
// rows, the edge of M: with micro-kernels of 8, 4, 2 and 1 rows, as many as the edge needs,
// instead of one MR-row kernel on zero padding. A short-M GEMM (49 rows in panels of 6 or 4) spent
// a tenth of its time on the padding's products.
//
// Only those four sizes are compiled beside MR, so that a candidate builds in about the same time
// whatever its MR: an edge of 7 rows is a 4-row, a 2-row and a 1-row kernel on the same B panel.
#pragma once

#include <cstdint>
#include <type_traits>

namespace optune::kernels::cpu {

// Calls group(rows, first) over groups of rows that cover [0, m) in order: rows is a
// std::integral_constant<int, R> (MR when m == MR, else 8, 4, 2 or 1, each below MR), first the
// group's first row.
template <int MR, typename Group>
void for_each_row_group(std::int64_t m, Group&& group) {
  if (m == MR) {
    group(std::integral_constant<int, MR>{}, std::int64_t{0});
    return;
  }
  std::int64_t first = 0;
  const auto take = [&](auto rows) {
    if constexpr (rows() < MR) {
      // Eight rows as often as they fit (an edge of an MR past 16: AMX's 32-row configs where
      // the target has no tiles), the others once.
      while (m - first >= rows()) {
        group(rows, first);
        first += rows();
      }
    }
  };
  take(std::integral_constant<int, 8>{});
  take(std::integral_constant<int, 4>{});
  take(std::integral_constant<int, 2>{});
  take(std::integral_constant<int, 1>{});
}

}  // namespace optune::kernels::cpu
