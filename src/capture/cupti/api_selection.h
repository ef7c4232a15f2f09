// Which CUDA runtime and driver API calls become ApiCall rows. Analysis needs
// only the calls that correlate with device work (launches, copies, memsets),
// the ones that block the host (synchronization, allocation) and the polls of
// a host that waits by spinning (stream and event queries); PyTorch makes ~15 other calls per kernel (cudaGetDevice, cuGetProcAddress, ...),
// and recording all of them is most of the tracer's cost on launch-bound loops.
#pragma once

#include <cupti.h>

#include <string_view>
#include <vector>

namespace magneton::capture {

enum class ApiCalls {
  kNone,      // no API call rows (kernels still placed by their op or their own start)
  kWaits,     // only the calls that can make the host wait: synchronization, copies, polls, allocation
  kLaunches,  // those and kernel, graph and memset launches (the default)
  kAll,       // every runtime and driver API call
};

// What an in-process recorder records: `ops` (operators in its measured
// phase): every call, which linking kernels to operators needs; a recording
// pass (`fingerprints`): the launches, whose external correlation records
// carry the operator and mark the fingerprints' own kernels as the
// recorder's; a measured pass: the waits alone.
ApiCalls RecorderApiCalls(bool ops, bool fingerprints);

// Parses "none", "waits", "launches", "all"; false for anything else.
bool ParseApiCalls(std::string_view text, ApiCalls* out);
const char* ApiCallsName(ApiCalls a);

// Whether an API function (CUPTI's callback name, "cudaLaunchKernel_v7000",
// "cuMemcpyHtoDAsync_v2") belongs to kLaunches.
bool IsLaunchLikeApi(std::string_view name);

// Whether it belongs to kWaits: a call that can block until the device is
// done (synchronize, copy, allocation, free) or polls it. A launch-bound loop
// makes a few of these per step against one launch per kernel, so recording
// only these costs almost nothing where the launches cost ~10% (docs/benchmarks.md).
bool IsWaitLikeApi(std::string_view name);

// Whether it asks the device whether work is done without waiting for it
// (cudaStreamQuery, cudaEventQuery, cuStreamQuery, cuEventQuery): what a
// thread that busy-waits calls in a loop. One of kLaunches, since the host-CPU
// finding counts them; the activity processor folds a loop of them into rows
// with a count (activity_processor.h).
bool IsPollingApi(std::string_view name);

// The callback ids of `domain` (runtime or driver API) that `which` (kWaits
// or kLaunches) selects (`selected`), or all the others, from libcupti's own
// names (no GPU needed).
std::vector<CUpti_CallbackId> SelectedApis(CUpti_CallbackDomain domain, ApiCalls which, bool selected = true);

}  // namespace magneton::capture
