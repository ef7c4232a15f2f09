// The outcome of diffing two runs: findings (groups of matched regions that
// compute the same values at different cost), each with a verdict, its cost on
// both sides, and the evidence for why the costs differ (docs/diff.md).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace magneton::analysis {

// Waste: one side spends >= threshold more energy, is not faster by more than
// 1%, and the outputs agree. Trade-off: it spends more but buys speed or the
// outputs differ. Noise: the difference is below the threshold or below what
// the measurement can resolve.
enum class Verdict { kWaste, kTradeOff, kNoise };

// Strongest evidence first: different operators, same operators but different
// kernels, same kernels but different launch parameters or input layouts.
// kArguments: the same operators called differently besides their inputs'
// layouts: other non-tensor arguments, inputs in other memory (pinned or
// pageable), copies that block the host (arguments.h).
// kTimeline: the same kernels, but the device waits longer for them on one
// side (the host launches them later: launch-bound, or a synchronization).
// kHost: the same device work, but one side's process keeps the CPU busier
// (host_cpu.h). kDispatch: the same work, dispatched one operator at a time
// on one side and as compiled calls on the other (dispatch.h). kNone: nothing
// structural differs (clocks, idle time, or measurement).
enum class EvidenceClass { kOperators, kKernels, kLaunch, kArguments, kTimeline, kHost, kDispatch, kNone };

// Where a cost came from. kTime: no energy was measured, time stands in.
// kEstimate: CPU energy estimated from CPU time (no RAPL on both sides).
enum class CostSource { kReplay, kAttributed, kMixed, kTime, kEstimate };

const char* ToString(Verdict v);
const char* ToString(EvidenceClass e);
const char* ToString(CostSource s);

// A duration as evidence text gives it: "1.25 ms", or "850.0 us" under a millisecond.
std::string Duration(double seconds);

inline constexpr double kUnmeasured = std::numeric_limits<double>::quiet_NaN();

// The cost of one side of a finding, summed over its instances.
struct SideCost {
  double joules = kUnmeasured;  // NaN when no energy was measured
  double seconds = 0;           // device time where kernels ran (with the device's wait before
                                // them, from a measured pass), else op wall time
  double wait_seconds = 0;      // of seconds: the device idle before this work, waiting for its launch
                                // (on a CPU run: the host's own code before the operators)
  std::vector<double> waits;    // wait_seconds per repetition costed (one without a measured pass)
  CostSource source = CostSource::kTime;
  std::vector<double> instances;  // per-instance cost (J, or s when kTime), for the noise test
  // The compared quantity: joules when measured, else seconds.
  double cost() const { return std::isnan(joules) ? seconds : joules; }
};

struct CallSite {
  std::string function, file;
  int32_t line = 0;
  std::string kind;  // "python" or "native"
  bool empty() const { return function.empty() && file.empty(); }
};

// One operator (or kernel) name on one side with how often it occurs.
struct NamedCount {
  std::string name;
  int64_t count = 0;
  double seconds = 0;  // total time (kernels: device time)
  CallSite call_site;  // innermost user frame of the first occurrence
};

struct ConfigDelta {
  std::string key, value_a, value_b;  // "<unset>" when a side lacks the key
  // In a finding: a rule names the key as steering this choice; false: no
  // rule does, but it differs where nothing in the code or data does.
  bool by_rule = true;
};

// A launch parameter or input layout that differs between paired kernels/ops.
struct ParamDelta {
  std::string subject;    // "kernel gemm_xyz" or "aten::mm input 0"
  std::string parameter;  // "grid", "block", "strides", "contiguous", ...
  std::string value_a, value_b;
};

// Where the launch call paths of the two sides part (outermost frame first).
struct Divergence {
  int depth = -1;             // frames in common before the divergence; -1: not recorded
  CallSite common;            // last frame both paths share
  CallSite frame_a, frame_b;  // first differing frames
};

struct RuleHit {
  std::string id, title, recommendation;
};

// One piece of evidence; a finding lists them strongest first.
struct Evidence {
  EvidenceClass kind = EvidenceClass::kNone;
  std::string summary;                     // one line
  std::vector<NamedCount> only_a, only_b;  // operators or kernels present on one side only
  std::vector<NamedCount> all_a, all_b;    // every operator or kernel of each side
  Divergence divergence;                   // kernels: where launch paths diverge
  std::vector<ConfigDelta> config;         // keys that differ and are known to steer this
  std::vector<ParamDelta> params;          // launch: what differs
};

struct Finding {
  int rank = 0;  // 1 = most joules saved; 0 for noise
  Verdict verdict = Verdict::kNoise;
  std::string label;             // "aten::addmm vs aten::mm + aten::add at pytorch_utils.py:119"
  char costly = 'a';             // the side that spends more: 'a' or 'b'
  std::vector<int64_t> regions;  // RegionMatch ids grouped here
  SideCost a, b;
  double cost_delta_pct = 0;       // (costly - lean) / lean * 100
  double time_delta_pct = 0;       // (time costly - time lean) / time lean * 100
  double saved_per_iteration = 0;  // J per iteration (s when unmeasured) by switching to the lean side
  double saved_pct_of_run = 0;     // saved as % of the costly run's whole cost
  double output_rel_diff = 0;      // largest relative fingerprint difference of outputs
  bool outputs_compared = true;    // false: matched by NVTX range name, no values recorded
  double noise_pct = 0;            // spread of the per-instance ratio, % (0: one instance)
  std::string why;                 // why this verdict, one line
  std::vector<Evidence> evidence;  // strongest first; evidence[0].kind is the finding's class
  std::vector<RuleHit> rules;      // known patterns that match, with recommendations
  EvidenceClass evidence_class() const {
    return evidence.empty() ? EvidenceClass::kNone : evidence.front().kind;
  }
};

}  // namespace magneton::analysis
