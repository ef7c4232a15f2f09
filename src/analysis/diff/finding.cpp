#include "analysis/diff/finding.h"

#include <fmt/core.h>

namespace magneton::analysis {

const char* ToString(Verdict v) {
  switch (v) {
    case Verdict::kWaste:
      return "waste";
    case Verdict::kTradeOff:
      return "trade-off";
    case Verdict::kNoise:
      return "noise";
  }
  return "?";
}

const char* ToString(EvidenceClass e) {
  switch (e) {
    case EvidenceClass::kOperators:
      return "operators";
    case EvidenceClass::kKernels:
      return "kernels";
    case EvidenceClass::kLaunch:
      return "launch";
    case EvidenceClass::kArguments:
      return "arguments";
    case EvidenceClass::kTimeline:
      return "timeline";
    case EvidenceClass::kHost:
      return "host";
    case EvidenceClass::kDispatch:
      return "dispatch";
    case EvidenceClass::kNone:
      return "none";
  }
  return "?";
}

const char* ToString(CostSource s) {
  switch (s) {
    case CostSource::kReplay:
      return "replay";
    case CostSource::kAttributed:
      return "attributed";
    case CostSource::kMixed:
      return "replay+attributed";
    case CostSource::kTime:
      return "time";
    case CostSource::kEstimate:
      return "estimate";
  }
  return "?";
}

std::string Duration(double seconds) {
  return seconds >= 1e-3 ? fmt::format("{:.2f} ms", seconds * 1e3) : fmt::format("{:.1f} us", seconds * 1e6);
}

}  // namespace magneton::analysis
