// The energy-regression gate (magneton check): a diff of a baseline run (a)
// and a new run (b) at the allowed regression, keeping what got costlier.
#pragma once

#include <string>
#include <vector>

#include "analysis/diff/diff.h"

namespace magneton::analysis {

struct Regression {
  std::string label;                 // the region group, "whole run" or "all operators"
  double base = 0, now = 0;          // cost per the diff's unit (J, or s when unmeasured)
  double pct = 0;                    // (now - base) / base * 100
  const Finding* finding = nullptr;  // null for the whole run
};

struct RegressionReport {
  double max_regression = 0.05;
  std::vector<Regression> regressions;   // costliest increase first; the whole run first if it regressed
  std::string whole_label;               // "whole run", or "all operators" for host times
  double whole_base = 0, whole_now = 0;  // what the whole-run comparison compared
  double whole_pct = 0;                  // whole-run change, %
  bool regressed() const { return !regressions.empty(); }
};

// `diff` must come from Diff(baseline, new) with options.threshold = max_regression:
// every non-noise group where the new side is costlier regressed (faster or
// not: the gate is about energy), and so did the whole run if it grew more.
RegressionReport FindRegressions(const DiffReport& diff, double max_regression);

}  // namespace magneton::analysis
