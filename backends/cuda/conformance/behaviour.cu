// y = 2 x + 1, behaving as MODE says (behaviour.toml).
#if MODE == 4
#error MODE 4 does not compile
#endif

extern "C" __global__ void behaviour(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // An empty endless loop is undefined behaviour that NVRTC removes; a sleep is a side effect.
  if (MODE == 3)
    for (;;) __nanosleep(1000000);
  if (MODE == 2 && i == 0) *reinterpret_cast<volatile int*>(0x10) = 1;  // an illegal address: sticky
  if (i < n && !(MODE == 6 && i == 0)) y[i] = 2.0f * x[i] + 1.0f + (MODE == 1 ? 1e-3f : 0.0f);
  if (MODE == 5 && i == n - 1) y[n] = 0.0f;
}

extern "C" __global__ void behaviour_reference(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
