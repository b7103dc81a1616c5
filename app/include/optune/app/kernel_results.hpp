// A kernel file's records in and out of optune, as `optune import/export --kernel-tuner` and
// `optune apply-best --kernel` ask for them (and the Python module may): a Kernel Tuner cache file
// (or a T4 results file) imported as records of the kernel file's workload, those records exported
// as a Kernel Tuner cache file (tuner/interop/kernel_tuner_cache.hpp says how the two map), and
// the header of the best configs an application builds with (tuner/results/kernel_header.hpp).
// Every error of the user's input is BadInput, raised before anything is written.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "optune/tuner/results/kernel_header.hpp"

namespace optune::app {

struct KernelTunerImportRequest {
  std::string cache;        // a Kernel Tuner cache file or a T4 results file (.json, .json.gz)
  std::string kernel_file;  // whose knobs are the cache's parameters
  std::string shape;        // "" for the kernel file's extents
  std::string target;       // "" for the kernel file's backend
  std::string device_name;  // "" for the cache's device_name
  std::string database;
};

struct KernelTunerImportResult {
  std::string workload_key;
  std::string device_name;
  std::string device_id;
  // Where the device's fingerprint came from: "the database" (a device of that name already has
  // records), "this machine", or "the name alone" (only its name is known: its limits read 0).
  std::string device_source;
  std::size_t configs = 0;  // records made: one per configuration of the cache
  std::size_t failed = 0;   // of them, failed configurations
  std::size_t invalid = 0;  // InvalidConfig entries: no record
  std::size_t added = 0;    // new in the database (an import of the same cache again adds none)
};

// The device is the one of that name (--device-name, else the cache's device_name) that the
// database has records of for the target, else this machine's device of that name, else a
// fingerprint of the name alone with the kernel file's backend as its kind.
KernelTunerImportResult import_kernel_tuner(const KernelTunerImportRequest& request);

struct KernelTunerExportRequest {
  std::string database;
  std::string kernel_file;
  std::string shape;   // "" for the kernel file's extents
  std::string target;  // "" any target of the file's backend (one must be recorded)
  std::string device;  // "" the only device recorded; else a device id or part of its name
  bool ok_only = false;
};

struct KernelTunerExport {
  std::string text;  // the cache file
  std::string workload_key;
  std::string device_name;
  std::size_t configs = 0;  // entries written
  std::size_t failed = 0;   // of them, failed configurations
  std::vector<std::string> passed_over;  // records left out: "<problem>" (forged, or of an older space)
};

// Per config its latest successful record, else its latest failure.
KernelTunerExport export_kernel_tuner(const KernelTunerExportRequest& request);

struct KernelApplyBestRequest {
  std::string database;
  std::string kernel_file;
  std::string target;                // "" every target of the file's backend
  std::string device;                // "" every device; else an id or part of a name
  std::vector<std::string> wanted;   // workload keys of the kernel the application uses
};

// The header's text and what it holds; the caller writes it (tuner::write_if_changed).
tuner::KernelHeader kernel_apply_best(const KernelApplyBestRequest& request);

}  // namespace optune::app
