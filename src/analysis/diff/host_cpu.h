// Host-side waste: both runs do the same device work, but one side's process
// keeps a CPU busy for it (a thread polling the GPU instead of blocking, host
// work the other side does not do). GPU energy barely moves, so no region
// shows it; the evidence is the CPU time that procfs recorded for the process
// and each of its threads (docs/diff.md, "Host CPU").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/diff/diff.h"
#include "analysis/diff/finding.h"
#include "analysis/diff/rules.h"
#include "core/run.h"

namespace magneton::analysis {

// One run's host CPU use over its recording window, per repetition of the
// recorded operators (the measured pass's repetitions divide it).
struct HostCpuUse {
  bool recorded = false;         // the run has the process's cpu.time series
  double cpu_s = 0;              // CPU time of the process
  double wall_s = 0;             // the window's wall time
  double device_s = 0;           // kernel time on the devices (0: no kernels recorded)
  double rapl_j = kUnmeasured;      // CPU-package energy measured (RAPL), when the run has it
  double estimate_j = kUnmeasured;  // cpu_s x watts per core (Magneton's threads left out), when the run has it
  std::string busiest_thread;    // "python (tid 1234)"
  double busiest_s = 0;          // that thread's CPU time
  double own_s = 0;              // Magneton's own threads ("mgt-*"): left out of cpu_s
  double repeats = 1;            // repetitions the figures above are divided by
  // The program's CPU time per iteration over each interval between two
  // procfs readings inside the window (cores busy x wall time per iteration):
  // its spread is the noise a difference must stand out of.
  std::vector<double> cpu_s_samples;
  std::vector<NamedCount> syncs;  // blocking synchronization API calls (cudaEventSynchronize, ...)
};

// `run` is the pass the costs come from; `repeats` its repetitions (0 or 1
// without a measured pass), run from `from_ns` to `to_ns` (the whole run when
// to_ns <= from_ns): a script's set-up and summary are no part of its steps.
HostCpuUse MeasureHostCpu(const Run& run, int64_t repeats, int64_t from_ns = 0, int64_t to_ns = 0);

// A run-level finding when one side's process spends at least the threshold
// more CPU time per iteration than the other, the difference is at least a
// tenth of a core over the run, and the matched regions' outputs agree.
// Waste when that side is not faster by more than max_speedup, else a
// trade-off (spinning can buy latency). Its energy is RAPL's when both sides
// measured it, else the estimate. nullopt when there is nothing to say:
// CPU time not recorded on a side, no kernels (CPU-only runs: region times
// already are host time), no matched region, too small a difference, or
// different device work (kernel time apart by the threshold: a host waiting
// longer for slower kernels is their finding, not the host's), or Magneton's
// own threads told apart on one side only.
// Nor when `host_slower` (0, 'a' or 'b': that side's host issued the same
// code more slowly throughout, host_time.h) is the costlier side and both
// make the same wait calls per iteration: the same host work, done on a
// slower or busier machine, takes more CPU time (an A/A pair on the H200:
// 13% more). Nor when a side has fewer than 5 procfs intervals, or the
// costlier side's per-interval figures do not lie above the other's beyond
// their spread (verdict.h, Separated): noise. `config`: the differing configuration keys both runs could have set.
std::optional<Finding> HostCpuFinding(const HostCpuUse& a, const HostCpuUse& b, const DiffReport& report,
                                      const std::vector<ConfigDelta>& config, const DiffOptions& options,
                                      char host_slower = 0);

}  // namespace magneton::analysis
