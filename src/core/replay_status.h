// How the replay of one operator key ended (run.h, ReplayMeasurement::status
// holds the name; docs/energy.md, "Replay", says what each means).
#pragma once

#include <optional>
#include <string_view>

namespace magneton {

enum class ReplayStatus {
  kOk,           // converged: the mean's relative standard error reached the target
  kHost,         // no device work: host time only, energy from idle power
  kBudget,       // the time budget ran out first
  kNoisy,        // the windows never converged
  kMismatch,     // replayed outputs differ from the recorded fingerprints
  kUnsupported,  // not replayed (host synchronization, an argument it cannot copy)
  kError,        // the call threw
};

// The stored text: "ok", "host", "budget", "noisy", "mismatch", "unsupported", "error".
std::string_view ReplayStatusName(ReplayStatus status);
// The status stored as `name`; none for a name no status has.
std::optional<ReplayStatus> ParseReplayStatus(std::string_view name);

}  // namespace magneton
