// NVML, loaded at run time. nvml.h is absent on machines without the driver
// toolkit, and the CLI must start where there is no GPU, so the few types and
// entry points Magneton uses are declared here by hand (ABI as in nvml.h of
// CUDA 12/13) and resolved with dlopen("libnvidia-ml.so.1").
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace magneton::energy::nvml {

using Return = int;                      // nvmlReturn_t
using DeviceHandle = struct nvmlDevice_st*;
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;

inline constexpr unsigned kFieldPowerInstant = 186;   // NVML_FI_DEV_POWER_INSTANT, mW
inline constexpr unsigned kClockSm = 1;               // NVML_CLOCK_SM
inline constexpr unsigned kClockMem = 2;              // NVML_CLOCK_MEM

struct PciInfo {                 // nvmlPciInfo_t (v3)
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
struct Memory {                  // nvmlMemory_t
  unsigned long long total, free, used;
};
struct Utilization {             // nvmlUtilization_t
  unsigned gpu, memory;
};
union Value {                    // nvmlValue_t
  double d;
  unsigned ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  int si;
  unsigned short us;
};
struct FieldValue {              // nvmlFieldValue_t
  uint32_t field_id;
  uint32_t scope_id;
  int64_t timestamp_us;          // wall clock of the reading
  int64_t latency_us;
  int value_type;                // nvmlValueType_t: 0 double, 1 uint, 2 ulong, 3 ull, 4 sll, 5 int, 6 ushort
  Return nvml_return;
  Value value;
};
double FieldAsDouble(const FieldValue& v);

// The entry points, resolved once per process. Members are null when the
// library lacks them (old drivers); callers check.
struct Api {
  Return (*Init)() = nullptr;                                      // nvmlInit_v2
  Return (*Shutdown)() = nullptr;
  const char* (*ErrorString)(Return) = nullptr;
  Return (*SystemGetDriverVersion)(char*, unsigned) = nullptr;
  Return (*SystemGetNVMLVersion)(char*, unsigned) = nullptr;
  Return (*DeviceGetCount)(unsigned*) = nullptr;                   // _v2
  Return (*DeviceGetHandleByIndex)(unsigned, DeviceHandle*) = nullptr;  // _v2
  Return (*DeviceGetName)(DeviceHandle, char*, unsigned) = nullptr;
  Return (*DeviceGetUUID)(DeviceHandle, char*, unsigned) = nullptr;
  Return (*DeviceGetPciInfo)(DeviceHandle, PciInfo*) = nullptr;    // _v3
  Return (*DeviceGetMemoryInfo)(DeviceHandle, Memory*) = nullptr;
  Return (*DeviceGetTotalEnergyConsumption)(DeviceHandle, unsigned long long*) = nullptr;  // mJ
  Return (*DeviceGetPowerUsage)(DeviceHandle, unsigned*) = nullptr;                          // mW
  Return (*DeviceGetPowerManagementLimit)(DeviceHandle, unsigned*) = nullptr;                // mW
  Return (*DeviceGetFieldValues)(DeviceHandle, int, FieldValue*) = nullptr;
  Return (*DeviceGetClockInfo)(DeviceHandle, unsigned, unsigned*) = nullptr;                 // MHz
  Return (*DeviceGetUtilizationRates)(DeviceHandle, Utilization*) = nullptr;

  std::string Describe(Return r) const;  // "NVML_ERROR_... (code)" text
};

// Loads the library and initializes NVML once; later calls return the same
// result. The error says why NVML is unusable (no driver, init failed, ...).
Result<const Api*> Load();

}  // namespace magneton::energy::nvml
