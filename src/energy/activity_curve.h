// An energy curve shaped by device activity instead of sampled power, for
// attribution. NVML's power readings update only every ~100 ms, so a power
// shape cannot say whether a 100 ms counter interval's joules went to the
// kernels or to the idle gap next to them. The kernel trace can: within each
// counter interval the delta is spent by a two-level power model, p_busy while
// any kernel or transfer runs and p_idle otherwise, with both levels fitted
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

// Fits mean power = idle_w + (busy_w - idle_w) x busy fraction over the
// counter intervals (least squares weighted by interval length). Nothing when
// the busy fraction barely varies (nothing to fit) or busy comes out cheaper
// than idle (the model does not describe this run).
std::optional<ActivityModel> FitActivityModel(const CounterAnchors& anchors, const BusyIntervals& busy);

// The counter-anchored curve over [from_ns, to_ns] spent by the model.
EnergyCurve ActivityCurve(const CounterAnchors& anchors, const BusyIntervals& busy, const ActivityModel& model,
                          int64_t from_ns, int64_t to_ns);

}  // namespace magneton::energy
