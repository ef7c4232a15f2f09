#include "capture/cupti/api_selection.h"

namespace magneton::capture {

ApiCalls RecorderApiCalls(bool ops, bool fingerprints) {
  return ops ? ApiCalls::kAll : fingerprints ? ApiCalls::kLaunches : ApiCalls::kWaits;
}

bool ParseApiCalls(std::string_view text, ApiCalls* out) {
  for (ApiCalls a : {ApiCalls::kNone, ApiCalls::kWaits, ApiCalls::kLaunches, ApiCalls::kAll})
    if (text == ApiCallsName(a)) {
      *out = a;
      return true;
    }
  return false;
}

const char* ApiCallsName(ApiCalls a) {
  switch (a) {
    case ApiCalls::kNone: return "none";
    case ApiCalls::kWaits: return "waits";
    case ApiCalls::kLaunches: return "launches";
    case ApiCalls::kAll: return "all";
  }
  return "?";
}

bool IsWaitLikeApi(std::string_view name) {
  // Waits; copies (runtime cudaMemcpy*, driver cuMemcpy*: from pageable
  // memory or to the host even the Async ones block); allocations and frees,
  // which can synchronize; polls.
  for (std::string_view part : {"Synchronize", "Memcpy", "Malloc", "MemAlloc", "Free"})
    if (name.find(part) != std::string_view::npos) return true;
  return IsPollingApi(name);
}

bool IsLaunchLikeApi(std::string_view name) {
  // Kernel, graph and host-function launches and memsets, and the waits.
  for (std::string_view part : {"Launch", "Memset"})
    if (name.find(part) != std::string_view::npos) return true;
  return IsWaitLikeApi(name);
}

bool IsPollingApi(std::string_view name) {
  return name.find("StreamQuery") != std::string_view::npos || name.find("EventQuery") != std::string_view::npos;
}

std::vector<CUpti_CallbackId> SelectedApis(CUpti_CallbackDomain domain, ApiCalls which, bool selected) {
  auto pick = which == ApiCalls::kWaits ? &IsWaitLikeApi : &IsLaunchLikeApi;
  uint32_t size = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_RUNTIME_TRACE_CBID_SIZE
                  : domain == CUPTI_CB_DOMAIN_DRIVER_API ? CUPTI_DRIVER_TRACE_CBID_SIZE
                                                         : 0;
  std::vector<CUpti_CallbackId> ids;
  for (uint32_t cbid = 1; cbid < size; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name && pick(name) == selected)
      ids.push_back(cbid);
  }
  return ids;
}

}  // namespace magneton::capture
