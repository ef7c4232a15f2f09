// What a benchmark reads of its own process (getrusage): CPU time of all its
// threads, which stays put when other work on a shared machine stretches the
// wall time, and its peak resident memory.
#pragma once

#include <sys/resource.h>

namespace magneton::bench {

inline double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

inline double PeakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

}  // namespace magneton::bench
