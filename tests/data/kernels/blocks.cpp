// The kernel of blocks.toml: zeroes its output.
extern "C" void blocks(float* out, int n) { for (int i = 0; i < n; ++i) out[i] = 0; }
