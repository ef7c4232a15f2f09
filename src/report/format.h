// Number formatting shared by the table and HTML reports.
#pragma once

#include <optional>
#include <string>

#include "analysis/diff/untraced.h"

namespace magneton::report {

std::string FormatJoules(double joules);    // "1.23 J", "456 mJ", "12.3 kJ"; "-" when NaN
std::string FormatSeconds(double seconds);  // "1.23 s", "456 ms", "78.0 us"
// A cost in the diff's unit: "J" or "s".
std::string FormatCost(double value, const std::string& unit);
std::string FormatPct(double pct, bool sign = false);  // "12.3%", "+12.3%"; "inf" when infinite
// `to` relative to `from`, % (NaN when `from` is not positive).
double ChangePct(double from, double to);
// "4.12 J in 7.80 ms per step, 850 untraced steps" (analysis/diff/untraced.h).
// Their energy is measured apart from the attribution, so it is shown even
// where the report compares time.
std::string FormatUntraced(const analysis::UntracedSteps& u);
// Both runs' untraced steps side by side: "b -24.7% energy per step (5.39 J
// against 4.06 J), -16.6% time (11.3 ms against 9.46 ms)"; time alone where
// a side has no energy; "" unless both have untraced steps.
std::string CompareUntraced(const std::optional<analysis::UntracedSteps>& a,
                            const std::optional<analysis::UntracedSteps>& b);
// Shortens long names (C++ kernel names) to n characters with an ellipsis.
std::string Shorten(const std::string& s, size_t n);

}  // namespace magneton::report
