#include "analysis/diff/untraced.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analysis/diff/row_select.h"
#include "energy/window.h"

namespace magneton::analysis {

namespace {

// Readings after `cut` go; with `keep_next` the first of them stays, so that
// curves ending at `cut` have a reading on each side of their end.
void CutSeries(SensorSeries& s, int64_t cut, bool keep_next) {
  auto after = std::upper_bound(s.t_ns.begin(), s.t_ns.end(), cut);
  if (after != s.t_ns.end() && keep_next) ++after;
  const auto keep = static_cast<size_t>(after - s.t_ns.begin());
  s.t_ns.resize(keep);
  s.value.resize(keep);
}

// The same bar as a measured pass's energy (docs/diff.md): a second and ten
// readings of every GPU sensor series that holds energy or power.
bool EnoughReadings(const Run& run, int64_t from, int64_t to) {
  constexpr int64_t kMinNs = 1'000'000'000;
  constexpr int64_t kMinReadings = 10;
  if (to - from < kMinNs) return false;
  for (const SensorSeries& s : run.series) {
    if (s.device < 0 || s.device >= static_cast<int32_t>(run.devices.size()) ||
        run.devices[s.device].kind != "gpu" || (s.unit != "J" && s.unit != "W"))
      continue;
    auto first = std::lower_bound(s.t_ns.begin(), s.t_ns.end(), from);
    auto last = std::upper_bound(s.t_ns.begin(), s.t_ns.end(), to);
    if (last - first < kMinReadings) return false;
  }
  return true;
}

// The idle hold noted before tracing stopped at `cut` (kIdleHeldKey: "FROM TO"), if well formed.
std::optional<std::pair<int64_t, int64_t>> IdleHeldBefore(const Run& run, int64_t cut) {
  auto held = run.info.extra.find(kIdleHeldKey);
  int64_t from = 0, to = 0;
  if (held == run.info.extra.end() ||
      std::sscanf(held->second.c_str(), "%" SCNd64 " %" SCNd64, &from, &to) != 2 || from >= to || to > cut)
    return std::nullopt;
  return std::pair{from, to};
}

}  // namespace

std::optional<UntracedSteps> TakeUntracedSteps(Run& run) {
  auto it = run.info.extra.find(kTracedUntilKey);
  if (it == run.info.extra.end()) return std::nullopt;
  char* end = nullptr;
  const long long cut = std::strtoll(it->second.c_str(), &end, 10);
  if (!end || *end != '\0' || cut <= run.info.start_ns) return std::nullopt;

  std::vector<int64_t> marks;
  for (const Range& r : run.ranges)
    if (IsStepMark(r) && r.start_ns > cut) marks.push_back(r.start_ns);
  std::sort(marks.begin(), marks.end());
  UntracedSteps out;
  if (marks.size() >= 2) {
    out.steps = static_cast<int64_t>(marks.size()) - 1;
    const double n = static_cast<double>(out.steps);
    out.seconds = (marks.back() - marks.front()) * 1e-9 / n;
    if (EnoughReadings(run, marks.front(), marks.back())) {
      double j = 0;
      bool any = false;
      for (const auto& e : energy::WindowEnergy(run, marks.front(), marks.back()))
        if (e.device.kind == "gpu" && !e.estimate) j += e.joules, any = true;
      if (any) out.joules = j / n;
    }
  }

  auto ranges = Select(run.ranges, [&](const Range& r) { return r.start_ns <= cut; });
  for (Range& r : run.ranges) r.parent = Mapped(ranges, r.parent);
  // Held idle before tracing stopped (kIdleHeldKey): the window ends where
  // the hold began, and the readings during the hold stay for the activity
  // model, none after it (the untraced steps' busy time is unknown).
  const auto held = IdleHeldBefore(run, cut);
  for (auto& s : run.series) CutSeries(s, held ? held->second : cut, !held);
  run.info.end_ns = held ? held->first : cut;
  run.info.extra.erase(it);
  return out;
}

std::string UntracedNote(char side, const std::optional<UntracedSteps>& u, const StepTimeline& tl) {
  if (!u) return {};
  if (u->steps < 1)
    return fmt::format("run {}: kernel tracing stopped, but fewer than two step marks followed: nothing was measured "
                       "untraced (call rec.step() once per iteration)",
                       side);
  constexpr double kSlower = 1.10;
  const double traced = tl.traced_seconds;
  if (!(traced > u->seconds * kSlower)) return {};
  std::string note = fmt::format("run {}: the traced steps took {:.3g} ms each, the {} untraced ones {:.3g} ms ({:+.0f}%): "
                                 "the tracer's cost on this program",
                                 side, traced * 1e3, u->steps, u->seconds * 1e3, (traced / u->seconds - 1) * 100);
  if (tl.tracer_delay_ns <= 0) return note + "; regions are costed on the traced steps";
  note += fmt::format("; {:.3g} us was taken off each idle gap before the device's work (the tracer's delay per launch), "
                      "so regions are costed on steps of {:.3g} ms",
                      tl.tracer_delay_ns * 1e-3, tl.seconds() * 1e3);
  if (tl.seconds() > u->seconds * kSlower) note += " (the rest of the difference lies in no gap: the device's own work ran slower)";
  return note;
}

}  // namespace magneton::analysis
