// Exports one run as a Chrome JSON trace (the "Trace Event Format"), which
// ui.perfetto.dev and chrome://tracing load: operators and ranges as slices on
// their threads, kernels and transfers on their device streams, and each
// power, energy or activity series as a counter track (docs/report.md).
#pragma once

#include <ostream>

#include "core/run.h"
#include "core/status.h"
#include "energy/attribution.h"

namespace magneton::report {

struct TraceStats {
  int64_t slices = 0, counters = 0, tracks = 0;
};

// Streams the trace to `out`. Slices that overlap without nesting (async
// ranges) are spread over extra lanes so every track nests properly.
TraceStats WritePerfettoTrace(const Run& run, const energy::Attribution& energy, std::ostream& out);

}  // namespace magneton::report
