// Inline SVG charts for the HTML report: no scripts, no external resources,
// so the report renders offline in any browser.
#pragma once

#include <string>
#include <vector>

namespace magneton::report {

std::string EscapeHtml(const std::string& s);

// 1, 2 or 5 times a power of ten, giving about `n` ticks over [0, max].
double TickStep(double max, int n);
// A tick's label: the value without trailing zeros ("0.5", "12").
std::string TickLabel(double v);

struct Bar {
  std::string label;  // drawn left of the bar
  double value = 0;
  std::string text;   // drawn right of the bar ("1.23 J")
  std::string color;  // CSS color
};

// Horizontal bars on one scale (the largest value spans the width).
std::string BarChart(const std::vector<Bar>& bars, int width, const std::string& title);

struct LineSeries {
  std::string name;
  std::string color;
  std::vector<double> x, y;  // x in seconds from the start of the run
};

// Step lines (a reading holds until the next one) on shared axes with ticks.
std::string StepChart(const std::vector<LineSeries>& series, int width, int height,
                      const std::string& x_label, const std::string& y_label);

}  // namespace magneton::report
