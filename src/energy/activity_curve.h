// An energy curve shaped by device activity instead of sampled power, for
// attribution. NVML's power readings update only every ~100 ms, so a power
// shape cannot say whether a 100 ms counter interval's joules went to the
// kernels or to the idle gap next to them. The kernel trace can: within each
// counter interval the delta is spent by a two-level power model, p_busy while
// any kernel or device-side transfer runs (a copy between host and device
// alone counts as idle) and p_idle otherwise, with both levels fitted
// over the whole run (docs/energy.md, "Attribution").
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "energy/energy_curve.h"

namespace magneton::energy {

// Disjoint, sorted busy intervals of a device (the union over its streams).
using BusyIntervals = std::vector<std::pair<int64_t, int64_t>>;
BusyIntervals UnionOf(std::vector<std::pair<int64_t, int64_t>> intervals);

struct ActivityModel {
  double idle_w = 0, busy_w = 0;
};

// One device's counter readings and busy intervals in one run.
struct ActivityTrace {
  CounterAnchors anchors;
  BusyIntervals busy;
};
// The trace of `device` in `run`: its counter anchors and the union of its
// kernels and transfers (synchronization records are host waits).
ActivityTrace TraceActivity(const Run& run, int32_t device);

// Fits mean power = idle_w + (busy_w - idle_w) x busy fraction over the
// counter intervals of the traces (least squares weighted by length): one
// trace, or one device seen in two runs. Consecutive intervals of about the
// same busy fraction are pooled into one point where such stretches spread
// enough to fit; else every interval is a point. Nothing when the busy
// fraction barely varies (nothing to fit) or busy comes out cheaper than idle
// (the model does not describe these runs).
std::optional<ActivityModel> FitActivityModel(const std::vector<const ActivityTrace*>& traces);

// The counter-anchored curve over [from_ns, to_ns] spent by the model.
EnergyCurve ActivityCurve(const CounterAnchors& anchors, const BusyIntervals& busy, const ActivityModel& model,
                          int64_t from_ns, int64_t to_ns);

}  // namespace magneton::energy
