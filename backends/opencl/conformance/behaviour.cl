// y = 2 x + 1, behaving as MODE says (behaviour.toml).
#if MODE == 4
#error MODE 4 does not compile
#endif

__kernel void behaviour(__global const float* x, __global float* y, int n) {
  const int i = get_global_id(0);
  if (MODE == 3) {
    volatile int spin = 1;
    while (spin) {
    }
  }
  if (MODE == 2 && i == 0) *(__global volatile int*)((__global char*)y - (1L << 40)) = 1;
  if (i < n && !(MODE == 6 && i == 0)) y[i] = 2.0f * x[i] + 1.0f + (MODE == 1 ? 1e-3f : 0.0f);
  if (MODE == 5 && i == n - 1) y[n] = 0.0f;
}

__kernel void behaviour_reference(__global const float* x, __global float* y, int n) {
  const int i = get_global_id(0);
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
