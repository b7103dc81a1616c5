/* A stand-in for the NVIDIA driver's libcuda.so.1 with two devices, so that the driver test can
 * check DriverApi's resolution and list_cuda_devices() on machines without a GPU. Its
 * cuGetProcAddress_v2 hands out functions that differ from the exported ones in one visible way
 * (the device count: 2 through it, 1 through dlsym), which tells the two paths apart. Environment,
 * read at each call: FAKE_CUDA_NO_PROC_ADDRESS (cuGetProcAddress_v2 finds nothing),
 * FAKE_CUDA_NO_DEVICE (cuInit answers CUDA_ERROR_NO_DEVICE). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
enum { kSuccess = 0, kInvalidValue = 1, kNoDevice = 100, kNotFound = 500 };

CUresult cuInit(unsigned flags) {
  (void)flags;
  return getenv("FAKE_CUDA_NO_DEVICE") ? kNoDevice : kSuccess;
}
CUresult cuDriverGetVersion(int* version) { *version = 13000; return kSuccess; }
CUresult cuDeviceGetCount(int* count) { *count = 1; return kSuccess; }
static CUresult device_count_through_proc_address(int* count) { *count = 2; return kSuccess; }
CUresult cuDeviceGet(int* device, int ordinal) { *device = ordinal; return kSuccess; }
CUresult cuDeviceGetName(char* name, int length, int device) {
  const char* names[] = {"Fake GPU 0", "Fake GPU 1"};
  if (device < 0 || device > 1 || length < 11) return kInvalidValue;
  strcpy(name, names[device]);
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int* value, int attribute, int device) {
  switch (attribute) {
    case 1: *value = 1024; break;            /* max threads per block */
    case 2: case 3: *value = 1024; break;    /* block dims x, y */
    case 4: *value = 64; break;              /* block dim z */
    case 5: *value = 2147483647; break;      /* grid dim x */
    case 6: case 7: *value = 65535; break;   /* grid dims y, z */
    case 8: *value = 49152; break;           /* shared per block */
    case 10: *value = 32; break;             /* warp size */
    case 12: *value = 65536; break;          /* registers per block */
    case 13: *value = 1980000; break;        /* clock kHz */
    case 16: *value = 132 + device; break;   /* SMs */
    case 38: *value = 52428800; break;       /* L2 bytes */
    case 75: *value = 9; break;              /* compute capability */
    case 76: *value = 0; break;
    case 97: *value = 232448; break;         /* shared per block, opt-in */
    default: return kInvalidValue;
  }
  return kSuccess;
}
CUresult cuDeviceTotalMem_v2(size_t* bytes, int device) {
  (void)device;
  *bytes = (size_t)80 << 30;
  return kSuccess;
}
CUresult cuGetErrorName(CUresult error, const char** name) {
  if (error != kNoDevice) return kInvalidValue;
  *name = "CUDA_ERROR_NO_DEVICE";
  return kSuccess;
}
CUresult cuGetErrorString(CUresult error, const char** text) {
  if (error != kNoDevice) return kInvalidValue;
  *text = "no CUDA-capable device is detected";
  return kSuccess;
}

/* NVRTC 13 opens libcuda.so.1 itself when it can and asks for the driver's private export tables;
 * without this symbol it calls through a null pointer. */
CUresult cuGetExportTable(const void** table, const void* id) {
  (void)id;
  *table = NULL;
  return kNotFound;
}

/* The rest of the table: present, never called by the test. */
static CUresult unused(void) { return kInvalidValue; }
#define UNUSED(name) CUresult name(void) { return unused(); }
UNUSED(cuDevicePrimaryCtxRetain) UNUSED(cuDevicePrimaryCtxRelease_v2) UNUSED(cuDevicePrimaryCtxReset_v2)
UNUSED(cuCtxSetCurrent) UNUSED(cuStreamCreate) UNUSED(cuStreamDestroy_v2) UNUSED(cuStreamSynchronize)
UNUSED(cuModuleLoadData) UNUSED(cuModuleUnload) UNUSED(cuModuleGetFunction) UNUSED(cuFuncSetAttribute)
UNUSED(cuLaunchKernel) UNUSED(cuEventCreate) UNUSED(cuEventRecord) UNUSED(cuEventSynchronize)
UNUSED(cuEventElapsedTime) UNUSED(cuEventDestroy_v2) UNUSED(cuMemAlloc_v2) UNUSED(cuMemFree_v2)
UNUSED(cuMemcpyHtoD_v2) UNUSED(cuMemcpyDtoH_v2) UNUSED(cuMemsetD8_v2) UNUSED(cuDeviceGetPCIBusId)
UNUSED(cuTensorMapEncodeTiled) UNUSED(cuTensorMapEncodeIm2col) UNUSED(cuStreamBeginCapture_v2) UNUSED(cuStreamEndCapture)
UNUSED(cuGraphInstantiateWithFlags) UNUSED(cuGraphLaunch) UNUSED(cuGraphExecDestroy) UNUSED(cuGraphDestroy)

struct Entry {
  const char* name;
  void* function;
};

CUresult cuGetProcAddress_v2(const char* symbol, void** function, int version, unsigned long long flags,
                             int* status) {
  static const struct Entry table[] = {
      {"cuInit", (void*)cuInit},
      {"cuDriverGetVersion", (void*)cuDriverGetVersion},
      {"cuDeviceGetCount", (void*)device_count_through_proc_address},
      {"cuDeviceGet", (void*)cuDeviceGet},
      {"cuDeviceGetName", (void*)cuDeviceGetName},
      {"cuDeviceGetAttribute", (void*)cuDeviceGetAttribute},
      {"cuDeviceTotalMem", (void*)cuDeviceTotalMem_v2},
      {"cuGetErrorName", (void*)cuGetErrorName},
      {"cuGetErrorString", (void*)cuGetErrorString},
  };
  (void)flags;
  *function = NULL;
  *status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
  if (getenv("FAKE_CUDA_NO_PROC_ADDRESS") || version != 12000) return kNotFound;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
    if (strcmp(table[i].name, symbol) == 0) {
      *function = table[i].function;
      *status = 0;
      return kSuccess;
    }
  }
  return kNotFound; /* the rest through dlsym, as a driver older than the symbol would have it */
}
