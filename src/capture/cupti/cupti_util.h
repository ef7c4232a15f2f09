// Small helpers for calling libcupti: results as text and as Status.
#pragma once

#include <cupti.h>

#include <string>

#include <fmt/core.h>

#include "core/status.h"

namespace magneton::capture {

inline std::string CuptiResultText(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) return fmt::format("CUPTI error {}", static_cast<int>(r));
  return s;
}

// kUnavailable "<call>: <CUPTI's message>" unless r is CUPTI_SUCCESS.
inline Status CuptiStatus(CUptiResult r, const char* call) {
  if (r == CUPTI_SUCCESS) return Status::Ok();
  return MakeError(ErrorCode::kUnavailable, fmt::format("{}: {}", call, CuptiResultText(r)));
}

}  // namespace magneton::capture
