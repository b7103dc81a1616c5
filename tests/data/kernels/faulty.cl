// y = 2 x + 1, with the fault MODE picks (faulty.toml).
__kernel void faulty(__global const float* x, __global float* y, int n) {
  const int i = get_global_id(0);
  if (MODE == 2) {
    volatile int spin = 1;
    while (spin) {
    }
  }
  if (i < n) y[i] = 2.0f * x[i] + 1.0f + (MODE == 1 ? 1e-3f : 0.0f);
  if (MODE == 3 && i == n - 1) y[n] = 0.0f;
}

__kernel void faulty_reference(__global const float* x, __global float* y, int n) {
  const int i = get_global_id(0);
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
