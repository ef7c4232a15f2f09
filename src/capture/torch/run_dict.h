// Run rows as plain Python objects (dicts and lists), for tests and scripts
// that inspect a recording without a separate reader.
#pragma once

#include <pybind11/pybind11.h>

#include "core/run.h"

namespace magneton::capture {

pybind11::dict FingerprintDict(const Fingerprint& fp);
// One Run::replays row; joules_per_call is None for a time-only replay.
pybind11::dict ReplayDict(const ReplayMeasurement& m);
// {"info", "devices", "ops", "tensors", "kernels", "frames", "stacks", "config", "stats", "series"}
pybind11::dict RunDict(const Run& run);

}  // namespace magneton::capture
