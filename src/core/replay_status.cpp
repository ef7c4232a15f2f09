#include "core/replay_status.h"

namespace magneton {

namespace {

constexpr ReplayStatus kAll[] = {ReplayStatus::kOk,       ReplayStatus::kHost,        ReplayStatus::kBudget,
                                 ReplayStatus::kNoisy,    ReplayStatus::kMismatch,    ReplayStatus::kUnsupported,
                                 ReplayStatus::kError};

}  // namespace

std::string_view ReplayStatusName(ReplayStatus status) {
  switch (status) {
    case ReplayStatus::kOk:
      return "ok";
    case ReplayStatus::kHost:
      return "host";
    case ReplayStatus::kBudget:
      return "budget";
    case ReplayStatus::kNoisy:
      return "noisy";
    case ReplayStatus::kMismatch:
      return "mismatch";
    case ReplayStatus::kUnsupported:
      return "unsupported";
    case ReplayStatus::kError:
      return "error";
  }
  return "error";
}

std::optional<ReplayStatus> ParseReplayStatus(std::string_view name) {
  for (ReplayStatus s : kAll)
    if (ReplayStatusName(s) == name) return s;
  return std::nullopt;
}

}  // namespace magneton
