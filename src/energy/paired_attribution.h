// Attribution of two runs that are compared with each other. Each run alone
// shapes its device's energy curve by activity when the activity model fits
// its own counter intervals, else by the power readings (activity_curve.h).
// Two runs of one comparison can then land on different methods: on the H200
// the same LM-head kernel, 3.06 ms on both sides, was given 1.36 J under
// "energy.total+power.instant" and 1.73 J under "energy.total+activity". A
// difference the method makes is not one the code makes, so both runs get the
// same method on the device they share: one activity model fitted over both
// runs' counter intervals, or, when even that cannot be fitted, the
// power-shaped curve on both (docs/energy.md, "Two runs compared").
#pragma once

#include <string>
#include <vector>

#include "core/run.h"
#include "energy/attribution.h"

namespace magneton::energy {

struct PairedAttribution {
  Attribution a, b;
  std::vector<std::string> notes;  // what was made alike, and why
};

// Attributes both runs. Devices are paired in order among those with energy
// on both sides, and only when they have the same name (the same kind of
// device). Runs whose methods already agree, or that lack what the other
// method needs (an energy counter, a kernel trace), are attributed as alone.
PairedAttribution AttributeAlike(const Run& a, const Run& b);

}  // namespace magneton::energy
