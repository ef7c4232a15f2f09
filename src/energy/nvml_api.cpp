#include "energy/nvml_api.h"

#include <dlfcn.h>

#include <mutex>

namespace magneton::energy::nvml {

double FieldAsDouble(const FieldValue& v) {
  switch (v.value_type) {
    case 0: return v.value.d;
    case 1: return v.value.ui;
    case 2: return static_cast<double>(v.value.ul);
    case 3: return static_cast<double>(v.value.ull);
    case 4: return static_cast<double>(v.value.sll);
    case 5: return v.value.si;
    case 6: return v.value.us;
    default: return 0;
  }
}

std::string Api::Describe(Return r) const {
  const char* text = ErrorString ? ErrorString(r) : nullptr;
  return (text ? std::string(text) : std::string("NVML error")) + " (" + std::to_string(r) + ")";
}

namespace {

template <class F>
bool Resolve(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

Result<const Api*> LoadOnce() {
  // RTLD_LOCAL: keep NVML's symbols out of the host program's namespace.
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    return MakeError(ErrorCode::kUnavailable,
                     std::string("NVML: cannot load libnvidia-ml.so.1 (no NVIDIA driver on this machine?): ") +
                         (why ? why : "unknown dlopen error"));
  }
  static Api api;
  bool core = Resolve(lib, "nvmlInit_v2", api.Init) && Resolve(lib, "nvmlShutdown", api.Shutdown) &&
              Resolve(lib, "nvmlDeviceGetCount_v2", api.DeviceGetCount) &&
              Resolve(lib, "nvmlDeviceGetHandleByIndex_v2", api.DeviceGetHandleByIndex);
  Resolve(lib, "nvmlErrorString", api.ErrorString);
  if (!core)
    return MakeError(ErrorCode::kUnavailable,
                     "NVML: libnvidia-ml.so.1 lacks nvmlInit_v2/nvmlDeviceGetCount_v2 (driver too old)");
  // Optional entry points: a missing one disables only its reading.
  Resolve(lib, "nvmlSystemGetDriverVersion", api.SystemGetDriverVersion);
  Resolve(lib, "nvmlSystemGetNVMLVersion", api.SystemGetNVMLVersion);
  Resolve(lib, "nvmlDeviceGetName", api.DeviceGetName);
  Resolve(lib, "nvmlDeviceGetUUID", api.DeviceGetUUID);
  Resolve(lib, "nvmlDeviceGetPciInfo_v3", api.DeviceGetPciInfo);
  Resolve(lib, "nvmlDeviceGetMemoryInfo", api.DeviceGetMemoryInfo);
  Resolve(lib, "nvmlDeviceGetTotalEnergyConsumption", api.DeviceGetTotalEnergyConsumption);
  Resolve(lib, "nvmlDeviceGetPowerUsage", api.DeviceGetPowerUsage);
  Resolve(lib, "nvmlDeviceGetPowerManagementLimit", api.DeviceGetPowerManagementLimit);
  Resolve(lib, "nvmlDeviceGetFieldValues", api.DeviceGetFieldValues);
  Resolve(lib, "nvmlDeviceGetClockInfo", api.DeviceGetClockInfo);
  Resolve(lib, "nvmlDeviceGetUtilizationRates", api.DeviceGetUtilizationRates);
  Return r = api.Init();
  if (r != kSuccess) return MakeError(ErrorCode::kUnavailable, "NVML: nvmlInit failed: " + api.Describe(r));
  // NVML stays initialized for the life of the process: samplers come and go,
  // and nvmlInit/nvmlShutdown pairs cost tens of milliseconds.
  return static_cast<const Api*>(&api);
}

}  // namespace

Result<const Api*> Load() {
  static std::once_flag once;
  static Result<const Api*> result = MakeError(ErrorCode::kInternal, "unset");
  std::call_once(once, [] { result = LoadOnce(); });
  return result;
}

}  // namespace magneton::energy::nvml
