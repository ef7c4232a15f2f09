#include "energy/launch_site.h"

namespace magneton::energy {

LaunchSites::LaunchSites(const Run& run) : run_(run) {
  for (const ApiCall& a : run.api_calls)
    if (a.correlation != 0) api_by_correlation_.emplace(a.correlation, &a);
}

LaunchSite LaunchSites::Of(int64_t correlation, int64_t op, int64_t start_ns) const {
  if (correlation != 0)
    if (auto it = api_by_correlation_.find(correlation); it != api_by_correlation_.end())
      return {it->second->thread, it->second->start_ns};
  if (op >= 0 && op < static_cast<int64_t>(run_.ops.size())) return {run_.ops[op].thread, run_.ops[op].start_ns};
  return {kAnyThread, start_ns};
}

}  // namespace magneton::energy
