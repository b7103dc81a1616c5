// How much of a GPU other processes use, from NVML (libnvidia-ml.so.1, loaded at run time like the
// driver): a second process running kernels on the GPU that a candidate is timed on time-slices
// with it and slows it, however quiet the host is. NVML samples each process's SM utilisation (the
// share of time one of its kernels ran) and answers per process since a given moment, so the
// others' share is theirs summed, ours left out. Process ids are those of our PID namespace (a
// container's, as measured on the GPU machine; see README.md).
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>

namespace optune::backends::cuda {

class GpuSharing {
 public:
  // The GPU at `pci_bus_id` (cuDeviceGetPCIBusId's "0000:3B:00.0"); a watcher that answers nullopt
  // where NVML is absent or does not know the device.
  explicit GpuSharing(const std::string& pci_bus_id);
  // Other processes' share (0..1) of the GPU's time since `since_unix_seconds`: their SM
  // utilisation summed over the samples NVML took since then (and half a second before),
  // `own_pid` left out. 0 where no
  // process but ours ran kernels (NVML has no newer sample); nullopt where NVML cannot tell.
  std::optional<double> others_share_since(double since_unix_seconds, pid_t own_pid) const;
  bool is_available() const { return device_ != nullptr; }

 private:
  void* device_ = nullptr;  // nvmlDevice_t
};

}  // namespace optune::backends::cuda
