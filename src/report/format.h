// Number formatting shared by the table and HTML reports.
#pragma once

#include <string>

namespace magneton::report {

std::string FormatJoules(double joules);    // "1.23 J", "456 mJ", "12.3 kJ"; "-" when NaN
std::string FormatSeconds(double seconds);  // "1.23 s", "456 ms", "78.0 us"
// A cost in the diff's unit: "J" or "s".
std::string FormatCost(double value, const std::string& unit);
std::string FormatPct(double pct, bool sign = false);  // "12.3%", "+12.3%"; "inf" when infinite
// `to` relative to `from`, % (NaN when `from` is not positive).
double ChangePct(double from, double to);
// Shortens long names (C++ kernel names) to n characters with an ellipsis.
std::string Shorten(const std::string& s, size_t n);

}  // namespace magneton::report
