// Operator replay (docs/energy.md, "Replay"): a capture pass keeps each
// selected operator's inputs (cloned, on their device) keyed by operator,
// shapes, dtypes, strides, scalar arguments and device; the replay re-invokes
// the operator through the dispatcher in a loop over windows spanning several
// sensor updates, which energy/replay_windows.h measures: time, energy and
// their spread per call.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "capture/torch/fingerprint.h"
#include "core/run.h"
#include "core/status.h"
#include "energy/replay_windows.h"

namespace magneton::capture {

// Which operator calls a capture keeps (the first call of each distinct key).
struct ReplaySelection {
  bool all = false;                  // every distinct key
  std::set<std::string> signatures;  // OpSignature texts: "aten::addmm(float32[8],float32[4x16],float32[16x8])"
  std::set<std::string> names;       // operator names: "aten::addmm"
  bool top_level_only = false;       // only ops not nested in another op (with names)
};

struct ReplayEntry {
  std::string key;        // signature + strides + scalar arguments + device
  std::string signature;  // as the diff's OpSignature: name(dtype[shape],...)
  std::string name, overload;
  int64_t ordinal = -1;   // index among the op calls seen while capturing (the recorder's op id)
  bool top_level = false;
  c10::Device device = c10::Device(c10::kCPU);
  std::vector<c10::IValue> args;       // cloned inputs
  std::vector<bool> writes;            // per argument: the schema marks it written
  bool random = false;                 // draws random numbers
  bool uninitialized = false;          // returns uninitialized memory (empty*): values are not compared
  at::Tensor rng_state;                // default generator's state when the op started (random ops)
  std::vector<Fingerprint> expected;   // outputs' fingerprints when recorded
  int64_t recorded_ns = 0;             // the recorded call's wall time
  std::string unsupported;             // why it cannot be replayed ("" = it can)
};

// Installs a RecordFunction callback that captures selected operator calls.
class ReplayCapture {
 public:
  static Result<std::unique_ptr<ReplayCapture>> Start(ReplaySelection selection, FingerprintOptions fingerprint);
  ~ReplayCapture();
  void Stop();  // idempotent
  std::vector<std::shared_ptr<ReplayEntry>> entries() const;
  int64_t seen() const;  // op calls seen

  struct State;
 private:
  explicit ReplayCapture(std::shared_ptr<State> s) : state_(std::move(s)) {}
  std::shared_ptr<State> state_;
};

struct ReplayOptions {
  energy::WindowRule windows;   // window length and convergence (status "noisy" after max_repeats)
  double op_budget_s = 10;      // per operator key
  double total_budget_s = 300;  // all keys together
  double idle_s = 0.6;          // quiet window for idle power (0: none)
  std::string energy = "auto";  // "auto", "nvml", "rapl", "none"
  double fingerprint_rtol = 1e-3;
  bool progress = true;         // progress lines on stderr
};

struct ReplayResult {
  ReplayMeasurement m;          // op = entry ordinal, device = CUDA ordinal or -1 (host)
  bool energy = false;          // joules_per_call measured (else -1)
  std::string energy_source;    // "nvml", "rapl", ... or the reason it is missing
  bool cuda_graph = false;      // the windows replayed a CUDA graph
  std::string detail;           // mismatch / error text
};

// Runs `n` calls of the entry in some other way (a CUDA graph); returns the
// calls it made, or -1 when the entry launches no device work (its graph is
// empty): the key is then timed on the host, status "host". Built per entry by
// the factory; an empty function = the plain loop.
using CallRunner = std::function<int64_t(int64_t n)>;
using RunnerFactory = std::function<CallRunner(size_t entry)>;

struct ReplayReport {
  std::vector<ReplayResult> results;
  std::vector<Stat> stats;
  std::map<std::string, double> idle_watts;  // per device label ("cuda:0", "cpu")
  std::string energy_reason;                 // why no energy, if none
};

// Keys are measured in decreasing recorded cost (ReplayEntry::recorded_ns), so
// a budget runs out on the cheap ones; results are in the order of `entries`.
Result<ReplayReport> RunReplay(const std::vector<std::shared_ptr<ReplayEntry>>& entries, const ReplayOptions& options,
                               const RunnerFactory& runners = {});

// `n` plain calls of `entry` (arguments of written inputs copied once).
void CallEntry(ReplayEntry& entry, int64_t n);

// Where two fingerprints disagree beyond `rtol` (of each statistic's scale,
// core/fingerprint_stats.h), as "stat a vs b"; empty when they agree. A NaN
// agrees with a NaN.
std::string FingerprintDisagreement(const Fingerprint& a, const Fingerprint& b, double rtol);

}  // namespace magneton::capture
