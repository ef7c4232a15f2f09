// Where a kernel or copy was launched: the one rule by which device work
// belongs to NVTX ranges, shared by `magneton top --by range` (report/top.cpp),
// the range rollup of attribution and the diff's NVTX-range regions
// (analysis/diff/range_regions.h). A range holds the work launched on its
// thread while it was open, both ends included; work launched on no known
// thread (kAnyThread) belongs to ranges on any thread.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "core/run.h"

namespace magneton::energy {

// Work launched on no known thread: it counts in a range on any thread.
inline constexpr int64_t kAnyThread = -1;

struct LaunchSite {
  int64_t thread = kAnyThread;
  int64_t t_ns = 0;
};

class LaunchSites {
 public:
  explicit LaunchSites(const Run& run);
  // The CUDA API call with the record's correlation id, else the start of the
  // op that launched it; with neither, the record's own start on kAnyThread
  // (an asynchronous kernel then counts where it ran, not where it was launched).
  LaunchSite Of(int64_t correlation, int64_t op, int64_t start_ns) const;
  LaunchSite Of(const Kernel& k) const { return Of(k.correlation, k.op, k.start_ns); }
  LaunchSite Of(const Transfer& t) const { return Of(t.correlation, t.op, t.start_ns); }

 private:
  const Run& run_;
  std::unordered_map<int64_t, const ApiCall*> api_by_correlation_;
};

}  // namespace magneton::energy
