#include "capture/cupti/launch_callbacks.h"

#include <generated_nvtx_meta.h>

#include <algorithm>
#include <span>
#include <tuple>
#include <vector>

#include "capture/cupti/cupti_util.h"

namespace magneton::capture {
namespace {

constexpr int kMaxFrames = 128;

// The launches whose call sites are worth a stack: kernels and graphs.
constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
};
constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

// Calls that can make the host wait for the device: their stacks name the
// line that synchronizes (docs/diff.md, synchronizing calls). Only these
// calls walk the stack, not every API call.
constexpr CUpti_CallbackId kRuntimeWaits[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,   CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,              CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,         CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
};
constexpr CUpti_CallbackId kDriverWaits[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,         CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz, CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy,                 CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,            CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,          CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,          CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,     CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,     CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz,
};

bool IsWait(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const auto ids = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? std::span<const CUpti_CallbackId>(kRuntimeWaits)
                                                         : std::span<const CUpti_CallbackId>(kDriverWaits);
  return std::find(ids.begin(), ids.end(), cbid) != ids.end();
}

// A runtime call (a launch, a wait) calls the driver's; the driver callback
// reuses the runtime's stack instead of walking the same frames again.
thread_local bool t_in_runtime_call = false;
thread_local uint32_t t_runtime_stack = 0;
// Per thread: for each open NVTX push, whether it matched the prefix.
thread_local std::vector<bool> t_pushes;

const char* AsciiMessage(const nvtxEventAttributes_t* a) {
  if (!a || a->messageType != NVTX_MESSAGE_TYPE_ASCII) return nullptr;
  return a->message.ascii;
}

}  // namespace

LaunchCallbacks::LaunchCallbacks(StackTable* stacks, WaitSites* waits, std::string range_prefix,
                                 std::function<void(bool)> on_range)
    : stacks_(stacks), waits_(waits), prefix_(std::move(range_prefix)), on_range_(std::move(on_range)) {}

LaunchCallbacks::~LaunchCallbacks() { Unsubscribe(); }

Status LaunchCallbacks::Subscribe() {
  MAGNETON_RETURN_IF_ERROR(CuptiStatus(cuptiSubscribe(&subscriber_, &LaunchCallbacks::OnCallback, this), "cuptiSubscribe"));
  using Ids = std::span<const CUpti_CallbackId>;
  auto enable = [&](CUpti_CallbackDomain domain, Ids ids, const char* what) -> Status {
    for (auto cbid : ids) MAGNETON_RETURN_IF_ERROR(CuptiStatus(cuptiEnableCallback(1, subscriber_, domain, cbid), what));
    return Status::Ok();
  };
  if (stacks_) {
    MAGNETON_RETURN_IF_ERROR(enable(CUPTI_CB_DOMAIN_RUNTIME_API, Ids(kRuntimeLaunches), "cuptiEnableCallback(runtime launch)"));
    MAGNETON_RETURN_IF_ERROR(enable(CUPTI_CB_DOMAIN_DRIVER_API, Ids(kDriverLaunches), "cuptiEnableCallback(driver launch)"));
  }
  if (stacks_ || waits_) {
    MAGNETON_RETURN_IF_ERROR(enable(CUPTI_CB_DOMAIN_RUNTIME_API, Ids(kRuntimeWaits), "cuptiEnableCallback(runtime wait)"));
    MAGNETON_RETURN_IF_ERROR(enable(CUPTI_CB_DOMAIN_DRIVER_API, Ids(kDriverWaits), "cuptiEnableCallback(driver wait)"));
  }
  if (!prefix_.empty()) {
    for (auto cbid : {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushEx, CUPTI_CBID_NVTX_nvtxRangePop,
                      CUPTI_CBID_NVTX_nvtxDomainRangePushEx, CUPTI_CBID_NVTX_nvtxDomainRangePop})
      MAGNETON_RETURN_IF_ERROR(
          CuptiStatus(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_NVTX, cbid), "cuptiEnableCallback(NVTX)"));
  }
  return Status::Ok();
}

void LaunchCallbacks::Unsubscribe() {
  if (!subscriber_) return;
  (void)cuptiUnsubscribe(subscriber_);
  subscriber_ = nullptr;
}

void CUPTIAPI LaunchCallbacks::OnCallback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                          const void* data) {
  auto* cb = static_cast<LaunchCallbacks*>(self);
  if (!cb || !data) return;
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    cb->OnNvtx(cbid, *static_cast<const CUpti_NvtxData*>(data));
  } else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    cb->OnLaunch(domain, cbid, *static_cast<const CUpti_CallbackData*>(data));
  }
}

void LaunchCallbacks::OnLaunch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& data) {
  if (waits_ && data.callbackSite == CUPTI_API_ENTER && IsWait(domain, cbid)) waits_->Entered(data.correlationId);
  if (!stacks_) return;
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (data.callbackSite == CUPTI_API_EXIT) {
    if (runtime) t_in_runtime_call = false;
    return;
  }
  uint32_t index;
  if (!runtime && t_in_runtime_call) {
    index = t_runtime_stack;
  } else {
    uintptr_t ips[kMaxFrames];
    int n = CaptureStack(ips, kMaxFrames);
    index = stacks_->Intern(ips, n);
    captured_.fetch_add(1, std::memory_order_relaxed);
    if (runtime) {
      t_in_runtime_call = true;
      t_runtime_stack = index;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  current_[data.correlationId] = index;
}

void LaunchCallbacks::OnNvtx(CUpti_CallbackId cbid, const CUpti_NvtxData& data) {
  const char* name = nullptr;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      name = static_cast<const nvtxRangePushA_params*>(data.functionParams)->message;
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      name = AsciiMessage(static_cast<const nvtxRangePushEx_params*>(data.functionParams)->eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
      name = AsciiMessage(static_cast<const nvtxDomainRangePushEx_params*>(data.functionParams)->core.eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop: {
      if (t_pushes.empty()) return;  // pushed before tracing began
      bool matched = t_pushes.back();
      t_pushes.pop_back();
      if (matched) on_range_(false);
      return;
    }
    default:
      return;
  }
  bool matched = name && std::string_view(name).starts_with(prefix_);
  t_pushes.push_back(matched);
  if (matched) on_range_(true);
}

std::optional<uint32_t> LaunchCallbacks::StackIndex(uint32_t correlation) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = current_.find(correlation); it != current_.end()) return it->second;
  if (auto it = previous_.find(correlation); it != previous_.end()) return it->second;
  return std::nullopt;
}

void LaunchCallbacks::Age() {
  std::lock_guard<std::mutex> lock(mu_);
  previous_ = std::move(current_);
  current_.clear();
}

}  // namespace magneton::capture
