// An external power meter as a timestamped CSV stream, one reading a line:
//   t_ns,watts[,channel]
// t_ns is CLOCK_MONOTONIC of this host (energy/clock.h; Python:
// time.monotonic_ns()), so readings line up with the traces. The source is a
// file (read, then followed as it grows) or a named pipe a meter bridge writes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "energy/sampler.h"
#include "energy/samplers.h"

namespace magneton::energy {

struct MeterReading {
  int64_t t_ns = 0;
  double watts = 0;
  std::string channel;  // empty: the meter's only channel
};

enum class MeterLine { kReading, kSkip, kBad };

// Parses one line (without its newline). Blank lines and '#' comments are
// skipped, as is a header line when `may_be_header` (the first line with
// content). Anything else that is not a valid reading is kBad with `why`.
MeterLine ParseMeterLine(std::string_view line, bool may_be_header, MeterReading* out, std::string* why);

// The sampler for options.meter. Fails when the file or pipe cannot be opened.
Result<std::unique_ptr<Sampler>> OpenMeterSampler(const SamplerOptions& options);

}  // namespace magneton::energy
