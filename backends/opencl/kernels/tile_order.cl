// Which output tile a GEMM work-group computes (included by gemm.cl, gemm_mma.cl, gemm_dot4.cl):
// tiles MWG x NWG, work-groups along dimension 0 for N and 1 for M. GSW > 1: groups start in the
// order of their linear id, so consecutive ids take the tiles of a band of GSW row tiles, column
// after column, and the groups running at one time share B's column tiles and A's row tiles in
// L2 (large matrices); 1: row by row.
#ifndef GSW
#define GSW 1
#endif

// The tile's first column (x) and row (y).
inline int2 tile_origin(void) {
#if GSW > 1
  const int groups_n = get_num_groups(0), groups_m = get_num_groups(1);
  const int id = get_group_id(1) * groups_n + get_group_id(0);
  const int band = id / (GSW * groups_n), first_row = band * GSW;
  const int band_rows = min(GSW, groups_m - first_row), in_band = id % (GSW * groups_n);
  return (int2)((in_band / band_rows) * NWG, (first_row + in_band % band_rows) * MWG);
#else
  return (int2)(get_group_id(0) * NWG, get_group_id(1) * MWG);
#endif
}
