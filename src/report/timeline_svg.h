// The HTML report's timeline: one iteration of each side (DiffReport::
// timelines) drawn on one time scale, items coloured by the finding whose
// region holds them, the device's idle stretches, its power, and the host's
// synchronizing calls. A click on a finding (its card or the legend)
// highlights its items; so does opening the report at #finding-N.
#pragma once

#include <string>

#include "analysis/diff/diff.h"

namespace magneton::report {

// The <section id="timeline">, or "" when neither side has a timeline.
std::string TimelineSection(const analysis::DiffReport& r);

// What the section needs in the page's <style> and (after the page) <script>.
extern const char* const kTimelineStyle;
extern const char* const kTimelineScript;

}  // namespace magneton::report
