// The HTML report of a diff: one self-contained file (inline CSS and SVG, no
// external resources) that opens offline: findings with their evidence,
// matched regions side by side, energy bars, power over time.
#pragma once

#include <string>

#include "analysis/diff/diff.h"
#include "core/run.h"
#include "report/json.h"

namespace magneton::report {

// `a` and `b` supply the power series: the measured passes when the diff used them.
std::string RenderHtml(const analysis::DiffReport& report, const Run& a, const Run& b, const RunPaths& paths);

}  // namespace magneton::report
