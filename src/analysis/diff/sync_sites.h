// Synchronizing calls (the host waiting for the device) and where a program
// makes them. A measured pass without operators places each call before the
// recorded operator whose device work comes next (pass_align.h); the
// recording pass, which has operators and their Python call sites, says
// where: inside an operator that reads a value back (`.item()`, `.cpu()`,
// `nonzero`), or between operators (`torch.cuda.synchronize()`).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/diff/finding.h"
#include "analysis/diff/pass_align.h"
#include "core/run.h"

namespace magneton::analysis {

// "cudaStreamSynchronize_v3020" -> "cudaStreamSynchronize".
std::string ApiName(std::string name);

// A synchronization CUPTI recorded (a transfer of kind "sync") and the API
// call it belongs to, nullptr where that call was not recorded.
struct SyncCall {
  const Transfer* sync = nullptr;
  const ApiCall* api = nullptr;
  std::string name() const { return api ? ApiName(api->name) : "synchronization"; }
  // How long the host blocked in it (CUPTI's synchronization record spans the wait).
  double blocked_seconds() const { return static_cast<double>(sync->end_ns - sync->start_ns) * 1e-9; }
};
// The program's synchronizations in record order (the recorder's own left out).
std::vector<SyncCall> SyncCalls(const Run& run);

// The device work that still waits on a synchronizing call. A call in which
// the host blocked for B (it was ahead of the device) puts everything the
// host launches after it B later than without it: the device's later waits
// are the call's, until they add up to B, and beyond that until the device
// has run back to back for B (the host ahead again). For each item of `work` (launch
// order), the index into `calls` of the call whose wait it follows, else -1;
// the first item after a call is the call's own place (SyncSites::Before),
// not counted here.
std::vector<int> WaitsAfterSyncs(const Run& run, const std::vector<DeviceWork>& work,
                                 const std::vector<SyncCall>& calls);
// WaitsAfterSyncs counted per place: for each place (an op, a segment) whose
// work still waits after a call, StillWaitingAfter(that call's label) -> the
// share of iterations in which it does (once per place and call an iteration).
// place_of(j) is the place of work[j], or kNone; calls
// with an empty label are left out.
std::unordered_map<int64_t, std::map<std::string, double>> PlacesWaitingAfterSyncs(
    const Run& run, const std::vector<DeviceWork>& work, const std::vector<SyncCall>& calls,
    const std::vector<std::string>& labels, double repeats, const std::function<int64_t(size_t)>& place_of);
// "<call label>, the device still waiting after it": how such waits name their call.
std::string StillWaitingAfter(const std::string& label);
bool IsStillWaitingAfter(const std::string& label);
// The call's label, without StillWaitingAfter's words.
std::string CallLabel(const std::string& label);

// Calls per iteration by name: "cudaStreamSynchronize x1, cudaMemcpy x2", or "none".
std::string SyncPhrase(const std::map<std::string, double>& syncs);
double Total(const std::map<std::string, double>& syncs);

// The causes timeline evidence names (rules/timeline.json matches them).
inline constexpr const char* kCauseSyncs = "the host waits for the device";
inline constexpr const char* kCauseLateLaunch = "the host launches later";
inline constexpr const char* kCauseHostCode = "the program's own code between operators";

// Timeline evidence's parameters, for rules (rules/timeline.json) and the
// report: each call the costlier side makes half a call or more per iteration
// more often, as ("synchronizing calls", its name, count a, count b), then the
// cause as ("timeline", "cause", ...) with `cause` on the costlier side and
// "-" on the other. An empty cause (the calls are not why that side costs
// more): every call whose count differs, and no cause.
// Whether synchronizing calls are why the device waits longer: only where the
// host was ahead of the device at them, so that each call cost it its lead
// (it blocked there, per iteration, for at least half the extra wait). A call
// made after the device had already drained returns at once: in a
// launch-bound stretch the device waits for the host's launches either way.
inline constexpr double kMinBlockedShareOfWait = 0.5;
inline bool SyncsExplainWait(double more_blocked_s, double more_wait_s) {
  return more_blocked_s >= kMinBlockedShareOfWait * more_wait_s;
}

std::vector<ParamDelta> TimelineParams(const std::map<std::string, double>& a, const std::map<std::string, double>& b,
                                       char costly, const std::string& cause);

class SyncSites {
 public:
  SyncSites() = default;
  // `alignment` maps `measured`'s device work onto `recorded`'s operators.
  SyncSites(const Run& recorded, const Run& measured, const PassAlignment& alignment);

  // The measured pass's synchronizing calls per iteration before the device
  // work of these recorded ops (pass every op, nested ones included), by
  // "cudaStreamSynchronize in aten::item at train.py:41 (step)" (for a call
  // between operators, "at <site>" from the call's own stack, else "before
  // <op> at <site>"; the bare name where the recording pass made no such
  // call there).
  std::map<std::string, double> Before(const std::vector<int64_t>& ops) const;
  // The host's time blocked in those calls, seconds per iteration.
  double BlockedBefore(const std::vector<int64_t>& ops) const;
  // The calls whose wait the device work of these ops still follows
  // (WaitsAfterSyncs), by StillWaitingAfter(label): the share of iterations
  // where any of the ops' work does.
  std::map<std::string, double> After(const std::vector<int64_t>& ops) const;

 private:
  std::unordered_map<int64_t, std::map<std::string, double>> by_op_, after_by_op_;
  std::unordered_map<int64_t, double> blocked_by_op_;
};

}  // namespace magneton::analysis
