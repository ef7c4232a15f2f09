// The NVML sampler: per GPU, the total energy counter, instant and averaged
// power, SM/memory clocks and utilization, each recorded when it changes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "energy/sampler.h"
#include "energy/samplers.h"

namespace magneton::energy {

// What one GPU offers; a reading's string is empty when it is readable,
// otherwise it says why not.
struct GpuProbe {
  unsigned nvml_index = 0;
  Device device;                 // kind "gpu", name, uuid, CUDA ordinal, memory
  std::string pci_bus_id;
  double power_limit_w = 0;
  std::string energy_counter, power_instant, power_usage;
};

struct NvmlProbe {
  std::string driver_version, nvml_version;
  std::vector<GpuProbe> gpus;    // in CUDA ordinal order, CUDA_VISIBLE_DEVICES applied
};

// Loads NVML and reads each visible GPU once. Fails only when NVML itself is
// unusable (no driver, init failed), with why.
Result<NvmlProbe> ProbeNvml();

// The NVML indices of the CUDA devices, in CUDA ordinal order, following
// CUDA_VISIBLE_DEVICES (`visible` null: unset). Entries are indices or GPU
// UUID prefixes; like CUDA, the list ends at the first entry that names no
// device. Assumes CUDA orders devices by PCI bus id as NVML does (true for
// identical GPUs; set CUDA_DEVICE_ORDER=PCI_BUS_ID on mixed hosts).
std::vector<unsigned> VisibleNvmlIndices(const char* visible, const std::vector<std::string>& uuids);

// Opens the sampler for options.gpus (CUDA ordinals; empty = all visible).
// Readings a GPU lacks are left out and reported in `problems`.
Result<std::unique_ptr<Sampler>> OpenNvmlSampler(const SamplerOptions& options, std::vector<Stat>* problems);

}  // namespace magneton::energy
