// The cost (energy and time) of a set of operators in one run. Energy comes
// from replay measurements where the run has them (one per operator key,
// docs/energy.md), else from the measured pass of the same program when one
// is given (pass_align.h), else from the run's own attribution; with no
// energy at all, time stands in and the cost says so (CostSource::kTime).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/diff/finding.h"
#include "analysis/diff/pass_align.h"
#include "analysis/diff/step_timeline.h"
#include "analysis/diff/sync_sites.h"
#include "core/run.h"
#include "core/run_index.h"
#include "energy/attribution.h"

namespace magneton::analysis {

class CostModel {
 public:
  CostModel(const Run& run, const energy::Attribution& attribution);
  // Costs come from `measured` (a measured pass of this run's program, with
  // its attribution), mapped onto this run's ops by `alignment`. Both must
  // outlive the model. program_seconds: the iteration as the program runs
  // untraced, when known (BuildStepTimeline).
  void UseMeasuredPass(const Run& measured, const energy::Attribution& energy, PassAlignment alignment,
                       double program_seconds = kUnmeasured);

  bool energy_measured() const;
  // Compares by time even though energy was measured (the other side has none).
  void UseTimeOnly() { time_only_ = true; }
  // Host wall times from a measured pass: interference (other processes,
  // stalled worker threads) only ever adds time, so the fastest repetition
  // is the estimate, one instance per region.
  void UseFastestRepetition() { fastest_ = true; }
  // This run's host issued the same code as the other's more slowly
  // throughout (host_time.h, JudgeLaunchDelays): its longer launch waits
  // are no cause by themselves.
  void MarkHostSlowerThroughout() { host_slower_ = true; }
  bool host_slower_throughout() const { return host_slower_; }
  bool has_kernels() const;
  bool used_replays() const { return !replay_by_signature_.empty(); }
  int64_t measured_repeats() const { return measured_ ? alignment_.repeats : 0; }
  const PassAlignment* alignment() const { return measured_ ? &alignment_ : nullptr; }
  // The run the costs come from (the measured pass when there is one) and its
  // repetitions on the device timeline.
  const Run& source_run() const { return measured_ ? *measured_ : run_; }
  const energy::Attribution& source_energy() const { return measured_ ? *measured_energy_ : attribution_; }
  const StepTimeline& timeline() const { return timeline_; }
  // The measured pass's synchronizing calls before each recorded op's work
  // (empty without a measured pass).
  const SyncSites& syncs() const { return syncs_; }

  // The cost of these ops; an op nested inside another op of the set counts
  // once. With a measured pass: the median over its repetitions, and
  // SideCost::instances holds each repetition's cost (the noise test uses them).
  SideCost Cost(const std::vector<int64_t>& ops) const;
  // The whole run per iteration: with a measured pass, one repetition on the
  // device timeline (step_timeline.h); else the recording window.
  SideCost WholeRun() const;

  // This (recording) run's ops, their nesting and the rows they launched.
  const RunIndex& index() const { return index_; }
  // The kernels these ops launched (nested ops included), by start time, and
  // the run they belong to: the measured pass's first repetition when there
  // is one (the recording pass also ran the fingerprinting). `ops`: for each
  // kernel, the op of this (recording) run that launched it; a measured
  // pass's kernels carry no op of their own, so their call paths are the
  // recorded op's.
  struct Launched {
    const Run* run = nullptr;
    std::vector<const Kernel*> kernels;
    std::vector<int64_t> ops;
  };
  Launched KernelsOf(const std::vector<int64_t>& ops) const;
  // Whether KernelsOf(ops) would find any, in the ops' own number of steps.
  bool Launches(const std::vector<int64_t>& ops) const;

  // Device time of the op's kernels (inclusive); wall time on a run without
  // kernels. With a measured pass: the median over its repetitions.
  double Seconds(int64_t op) const;

 private:
  struct OpCost {
    double joules = 0, seconds = 0;
    bool replayed = false;
    double wait = 0;  // of seconds: the device waiting for the op's work
  };
  // rep: the costed repetition of the measured pass (ignored without one).
  OpCost CostOf(int64_t op, int64_t rep) const;
  OpCost OwnCostOf(int64_t op, int64_t rep) const;  // without replays
  double OwnSeconds(int64_t op) const;              // from this run's own records
  double AttributedJoules(int64_t op) const;
  int64_t costed_repeats() const { return measured_ ? static_cast<int64_t>(costed_.size()) : 1; }
  void TabulateMeasuredCosts();
  void MarkLaunches();

  const Run& run_;
  const energy::Attribution& attribution_;
  RunIndex index_;
  std::unordered_map<std::string, const ReplayMeasurement*> replay_by_signature_;
  std::vector<char> has_replay_below_;  // by op: it or a descendant has a replay
  std::vector<char> launches_;          // by op: it or a descendant launched a kernel (as KernelsOf counts)
  const Run* measured_ = nullptr;
  const energy::Attribution* measured_energy_ = nullptr;
  PassAlignment alignment_;
  StepTimeline timeline_;
  SyncSites syncs_;
  // The repetitions costed (all, or evenly spaced ones of a long pass), and
  // per costed repetition and recorded op its inclusive joules and seconds.
  std::vector<int64_t> costed_;
  std::vector<double> rep_j_, rep_s_;  // [costed index * ops + op], waits included
  std::vector<double> rep_wait_s_;     // ...of which the device waited before the op's work
  bool time_only_ = false;
  bool fastest_ = false;
  bool host_slower_ = false;
};

}  // namespace magneton::analysis
