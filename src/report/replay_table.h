// Replay measurements of a run (Run::replays, docs/energy.md "Replay") as a
// terminal table and JSON, for `magneton top`: per operator key, calls per
// window, time and energy per call (total and above idle), CV and status.
// Every figure here comes from replay, and the table says so.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "core/run.h"

namespace magneton::report {

// Empty when the run has no replays. At most `limit` rows (0: all), largest
// energy (else time) per call first.
std::string RenderReplays(const Run& run, size_t limit);
// [{op, name, key, device, calls, repeats, seconds_per_call, joules_per_call
//   (null without energy), above_idle_joules_per_call, idle_watts, cv, status,
//   source: "replay"}]
nlohmann::json ReplaysToJson(const Run& run);

}  // namespace magneton::report
