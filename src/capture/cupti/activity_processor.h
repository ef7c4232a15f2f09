// Turns CUPTI activity records into Run rows: kernels, memcpy/memset and
// synchronization (Transfer), runtime/driver API calls, NVTX ranges, and the
// GPUs they ran on. Pure record processing with no libcupti calls, so the
// same code runs on live buffers (the tracer) and on saved ones (tests).
//
// A thread polling the device (a stream or event query in a loop, hundreds
// of thousands of calls a second) would fill the run with identical rows. From
// a thread's polling call until it makes a launch-like call (api_selection.h),
// each distinct call it makes is kept as one row: the first call's start and
// correlation, the last one's end, and how many calls it stands for
// (ApiCall::count). Rows of a stretch are written when it ends, and at the end
// of each batch.
//
// The recorder's own work (op kRecorderWork) is folded likewise: its kernels
// and copies into one row per stretch on a stream (recorder_stretches.h), its
// API calls and waits left out; stat cupti_recorder_rows_folded counts them.
//
// Threading: one thread at a time (the one that owns the RunWriter).
#pragma once

#include <cupti_activity.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "capture/cupti/nvtx_ranges.h"
#include "capture/cupti/recorder_stretches.h"
#include "core/run.h"
#include "core/status.h"

namespace magneton {
class RunWriter;
}

namespace magneton::capture {

// The external correlation kind that carries Run op ids (PushExternalId).
inline constexpr CUpti_ExternalCorrelationKind kOpCorrelationKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

struct ProcessorOptions {
  bool kernels = true;
  bool transfers = true;   // memcpy, memset, synchronization
  bool api_calls = true;
  bool nvtx = true;
  // Name of a runtime/driver API callback id (cuptiGetCallbackName live, a
  // dump's table in replay). Unset or empty answer: "<domain> cbid <n>".
  std::function<std::string(uint32_t domain, uint32_t cbid)> api_name;
  // The run's Stack id of the launch with this correlation id, or kNone.
  std::function<int64_t(uint32_t correlation)> stack_of;
  // The run's device table, shared with whatever else adds devices (the
  // energy samplers): a GPU is matched by uuid, else by CUDA ordinal, and
  // added when absent. nullptr: no Device rows; a kernel's device is its
  // CUDA ordinal (right when the samplers added the GPUs in ordinal order).
  std::vector<Device>* devices = nullptr;
};

struct ProcessorCounts {
  int64_t records = 0;
  int64_t kernels = 0, transfers = 0, api_calls = 0, ranges = 0;  // rows written
  int64_t api_calls_folded = 0;  // polling calls counted in another call's row
  int64_t syncs_folded = 0;      // their synchronization records, merged into that row's
  int64_t linked = 0;     // kernels and transfers given an op through external correlation
  int64_t ignored = 0;    // record kinds this processor does not read
  int64_t malformed = 0;  // records shorter than their kind's structure
};

// An instant the recorder itself marks (CuptiTracer::Mark).
struct ProcessorMark {
  std::string name;
  int64_t thread = 0;
  int64_t t_ns = 0;
};

class ActivityProcessor {
 public:
  ActivityProcessor(RunWriter* writer, ProcessorOptions options);

  // One record; `size` is the number of bytes it occupies. The record only
  // needs to live for the call.
  Status Process(const CUpti_Activity* record, size_t size);
  // A zero-length range in domain "magneton", written with the next batch.
  void AddMark(ProcessorMark m);
  // After each batch of buffers: writes finished ranges, forgets stale correlations.
  Status EndBatch();
  // The recording is over: ranges still open end at `end_ns`; stats are written.
  Status Finish(int64_t end_ns);

  const ProcessorCounts& counts() const { return counts_; }

 private:
  Status OnKernel(const CUpti_ActivityKernel10& k);
  Status OnMemcpy(const CUpti_ActivityMemcpy6& m);
  Status OnPeer(const CUpti_ActivityMemcpyPtoP4& m);
  Status OnMemset(const CUpti_ActivityMemset4& m);
  Status OnSync(const CUpti_ActivitySynchronization2& s);
  Status OnApi(const CUpti_ActivityAPI& a, const char* domain);
  Status WriteApi(ApiCall a);
  Status EndPolling(int64_t thread);
  Status FlushHeldSyncs();
  Status OnExternal(const CUpti_ActivityExternalCorrelation& e);
  Status OnDevice(const CUpti_ActivityDevice5& d);
  void OnMarker(const CUpti_ActivityMarker2& m);
  Status AddTransfer(Transfer t, uint32_t correlation);
  Status WriteKernel(Kernel& k);  // gives it the next id
  Status WriteKernels(std::vector<Kernel> stretches);

  Result<int32_t> DeviceId(uint32_t ordinal);
  const std::string& KernelName(const char* mangled);
  int64_t OpOf(uint32_t correlation) const;
  int64_t StackOf(uint32_t correlation) const;

  RunWriter* writer_;
  ProcessorOptions options_;
  ProcessorCounts counts_;
  RangeBuilder ranges_;
  int64_t next_kernel_ = 0, next_transfer_ = 0, next_api_ = 0;
  int64_t batch_ = 0;
  RecorderStretches recorder_;
  int64_t recorder_waits_ = 0, recorder_calls_ = 0;  // the recorder's syncs and API calls, not written

  struct DeviceInfo {
    std::string name, uuid;
    int64_t memory_bytes = 0;
  };
  std::map<uint32_t, DeviceInfo> device_info_;        // CUDA ordinal -> what a DEVICE record said
  std::map<uint32_t, int32_t> device_ids_;            // CUDA ordinal -> run device id
  std::unordered_map<uint32_t, uint32_t> context_device_;  // context id -> CUDA ordinal
  std::unordered_map<const char*, std::pair<std::string, std::string>> names_;  // raw -> (raw, demangled)
  struct ApiName {
    std::string name;
    bool polling = false, launch_like = false;
  };
  std::map<std::pair<uint32_t, uint32_t>, ApiName> api_names_;
  // Per thread in a polling stretch: one row per distinct call, in order of first call.
  std::map<int64_t, std::vector<ApiCall>> polling_;
  // CUPTI writes a call's synchronization record before the call's own
  // record: the program's sync records wait here for their call (or the end
  // of the batch), so that those of folded polling calls join one row.
  std::unordered_map<uint32_t, Transfer> held_syncs_;
  // The sync row of each polling row (by its correlation), spanning the
  // stretch's polls; written with the row.
  std::unordered_map<uint32_t, Transfer> stretch_syncs_;

  // Correlations are kept for a few batches: an op id may arrive after its
  // kernel (LinkKernel), or before it (the usual case).
  struct Stamped {
    int64_t value;
    int64_t batch;
  };
  std::unordered_map<uint32_t, Stamped> ops_by_correlation_;
  std::unordered_multimap<uint32_t, Stamped> unlinked_kernels_, unlinked_transfers_;
};

}  // namespace magneton::capture
