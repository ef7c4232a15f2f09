// The repetitions of a measured pass on the device timeline (docs/diff.md,
// "Time and energy per iteration"). A GPU-bound loop's host runs ahead of
// its device, so an iteration's time is where the device spends it: from the
// start of its first kernel or copy to the start of the next iteration's.
// Beside it: the host's own period (from the launch calls), the time the
// device was busy and idle, and the energy of each window and of its idle
// stretches. Inside an iteration, the device waiting for a kernel (a launch
// the host had not made yet, a synchronization before it) is that kernel's
// wait: its cost is the kernel's, as much as the kernel's own run. A run
// without device work (a CPU run) has the host's timeline: top-level
// operators in place of kernels, and the host's time before each (the
// program's own code issuing it) as its wait.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/diff/finding.h"
#include "analysis/diff/pass_align.h"
#include "core/run.h"
#include "energy/attribution.h"

namespace magneton::analysis {

struct StepWindow {
  int32_t rep = 0;                   // the repetition (pass_align.h)
  int64_t start_ns = 0, end_ns = 0;  // first item's start .. the next repetition's (the last: its last item's end)
  int64_t busy_ns = 0;               // with at least one item running
  int64_t launch_ns = -1;            // host: the launch call of its first item (-1: no launch records)
  double joules = kUnmeasured;       // energy of the window, on the devices that ran its items
  double idle_j = kUnmeasured;       // ...of its stretches with nothing running
  int64_t tail_ns = 0;               // idle after its last item, to the next window
  double tail_j = kUnmeasured;
  // Items outside every repetition that start inside the window: the
  // program's own work between two steps (an evaluation, a checkpoint).
  int64_t foreign = 0;
  bool counted = true;  // averaged into the per-iteration figures (StepTimeline::full_period)
  // Taken off its waits and tail as the tracer's delay (BuildStepTimeline's
  // program_seconds); joules, idle_j and tail_* are already net of it.
  int64_t trimmed_ns = 0;
  int64_t length_ns() const { return end_ns - start_ns - trimmed_ns; }
};

// How long the device waited before an item of a repetition, since the
// previous item of the repetition ended (0 for its first), and that stretch's energy.
struct Wait {
  int64_t ns = 0;
  double joules = 0;
};

struct StepTimeline {
  bool on_device = false;  // windows from kernels and copies; else from operators (host)
  std::vector<StepWindow> steps;
  std::vector<Wait> kernel_wait, transfer_wait;  // by Kernel / Transfer id (device timeline only)
  // By Op id, top-level ops of a host timeline only: the host's time since the
  // previous operator of the repetition ended (the Python that issues it).
  std::vector<Wait> op_wait;
  // The program's step marks (`rec.step()`, core/run.h kStepMark), in time
  // order: the host's period where launch calls were not recorded.
  std::vector<int64_t> step_marks_ns;
  double run_j = kUnmeasured;  // the whole measured run, same devices
  double run_s = 0;
  // The delay taken off each gap (0: none), and the traced iteration's
  // seconds before (BuildStepTimeline's program_seconds).
  int64_t tracer_delay_ns = 0;
  double traced_seconds = kUnmeasured;

  // Per-iteration figures average the full periods: every window but the
  // last, which ends with its last item rather than at the next iteration,
  // and but those holding other work of the program (StepWindow::foreign)
  // where they are fewer than half (else that work is part of every step).
  bool full_period(size_t window) const { return steps[window].counted; }
  int64_t foreign_windows = 0, foreign_items = 0;  // windows left out for such work, and its items
  // Per iteration (means over the full periods).
  double seconds() const;       // device time (host time of a CPU run)
  // The host's period: between the launches of consecutive iterations, else
  // between step marks (their median where some windows held other work);
  // NaN with neither.
  double host_seconds() const;
  double busy_seconds() const;
  double idle_seconds() const { return seconds() - busy_seconds(); }
  double joules() const;         // NaN when unmeasured
  double idle_joules() const;    // all idle stretches of the iteration
  double tail_joules() const;    // idle after its last item (the rest are waits)
  double tail_seconds() const;
  double outside_joules() const;  // of the whole run, outside every repetition
};

// `alignment` places the measured run's items in repetitions (pass_align.h);
// `energy` is that run's attribution. `program_seconds`: the iteration as the
// program runs untraced (untraced.h), when known. Traced steps that took
// longer carry the tracer's cost per launch, which on a launch-bound step
// shows as longer waits before the device's items: one delay per gap is
// taken off every wait and idle tail (a shorter gap closes), as much in all
// as the counted windows' mean excess, each gap's energy in proportion.
StepTimeline BuildStepTimeline(const Run& measured, const energy::Attribution& energy,
                               const PassAlignment& alignment, double program_seconds = kUnmeasured);

}  // namespace magneton::analysis
