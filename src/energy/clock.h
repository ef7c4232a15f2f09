// The one clock of every trace: CLOCK_MONOTONIC in nanoseconds.
//
// Why this clock (docs/energy.md has the long form): it never jumps (NTP steps
// and manual clock changes move CLOCK_REALTIME, not this one), it keeps counting
// across suspend the same way for every process on the host, it is readable
// from any thread or process in ~20 ns through the vDSO, and Python exposes it
// as time.monotonic_ns(), so the CUPTI injection library, the torch recorder,
// the samplers, a meter bridge script and a user's own timestamps all agree
// without conversion. CUPTI gets it through cuptiActivityRegisterTimestampCallback.
#pragma once

#include <time.h>

#include <cstdint>

namespace magneton::energy {

inline constexpr const char* kClockDomain = "CLOCK_MONOTONIC";

inline int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A C-callable form with the signature CUPTI's timestamp callback expects
// (uint64_t (*)(void)), so the injection library can register it directly.
extern "C" inline uint64_t MagnetonClockNs() { return static_cast<uint64_t>(NowNs()); }

}  // namespace magneton::energy
