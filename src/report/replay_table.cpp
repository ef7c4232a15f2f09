#include "report/replay_table.h"

#include <fmt/core.h>

#include <algorithm>
#include <vector>

namespace magneton::report {

namespace {

std::string OpName(const Run& run, const ReplayMeasurement& m) {
  if (m.op >= 0 && m.op < static_cast<int64_t>(run.ops.size())) return run.ops[m.op].name;
  return m.key.substr(0, m.key.find('('));
}

bool HasEnergy(const ReplayMeasurement& m) { return m.joules_per_call >= 0; }

std::vector<const ReplayMeasurement*> Sorted(const Run& run) {
  std::vector<const ReplayMeasurement*> rows;
  for (const auto& m : run.replays) rows.push_back(&m);
  std::stable_sort(rows.begin(), rows.end(), [](const ReplayMeasurement* a, const ReplayMeasurement* b) {
    if (HasEnergy(*a) != HasEnergy(*b)) return HasEnergy(*a);
    return HasEnergy(*a) ? a->joules_per_call > b->joules_per_call : a->seconds_per_call > b->seconds_per_call;
  });
  return rows;
}

}  // namespace

std::string RenderReplays(const Run& run, size_t limit) {
  if (run.replays.empty()) return "";
  auto rows = Sorted(run);
  bool any_energy = false;
  for (auto* m : rows) any_energy |= HasEnergy(*m);
  std::string out = fmt::format("\nreplayed operators ({} keys; figures from replay, docs/energy.md \"Replay\")\n",
                                rows.size());
  out += fmt::format("  {:<28} {:>9} {:>11} {:>11} {:>11} {:>7} {:>6}  {}\n", "operator", "calls/win", "s/call",
                     "J/call", "J>idle", "idle W", "CV%", "status");
  size_t shown = 0;
  for (auto* m : rows) {
    if (limit && shown++ >= limit) break;
    std::string j = "-", above = "-";
    if (HasEnergy(*m)) {
      j = fmt::format("{:.3e}", m->joules_per_call);
      above = fmt::format("{:.3e}", m->joules_per_call - m->idle_watts * m->seconds_per_call);
    }
    out += fmt::format("  {:<28} {:>9} {:>11.3e} {:>11} {:>11} {:>7.1f} {:>6.2f}  {}\n", OpName(run, *m).substr(0, 28),
                       m->calls, m->seconds_per_call, j, above, m->idle_watts, 100 * m->cv, m->status);
  }
  if (limit && rows.size() > limit) out += fmt::format("  ... {} more\n", rows.size() - limit);
  if (!any_energy) out += "  energy unavailable when replayed (no energy sensor): time per call only\n";
  return out;
}

nlohmann::json ReplaysToJson(const Run& run) {
  nlohmann::json rows = nlohmann::json::array();
  for (auto* m : Sorted(run)) {
    nlohmann::json j = nullptr, above = nullptr;
    if (HasEnergy(*m)) {
      j = m->joules_per_call;
      above = m->joules_per_call - m->idle_watts * m->seconds_per_call;
    }
    rows.push_back({{"op", m->op},
                    {"name", OpName(run, *m)},
                    {"key", m->key},
                    {"device", m->device},
                    {"calls", m->calls},
                    {"repeats", m->repeats},
                    {"seconds_per_call", m->seconds_per_call},
                    {"joules_per_call", j},
                    {"above_idle_joules_per_call", above},
                    {"idle_watts", m->idle_watts},
                    {"cv", m->cv},
                    {"status", m->status},
                    {"source", "replay"}});
  }
  return rows;
}

}  // namespace magneton::report
