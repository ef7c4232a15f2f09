#include "report/svg.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace magneton::report {

double TickStep(double max, int n) {
  if (max <= 0) return 1;
  double raw = max / n, p = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

std::string TickLabel(double v) { return fmt::format("{:g}", std::round(v * 1e6) / 1e6); }

std::string EscapeHtml(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string BarChart(const std::vector<Bar>& bars, int width, const std::string& title) {
  const int row = 22, label_w = 150, text_w = 90;
  const int bar_w = std::max(40, width - label_w - text_w);
  double max = 0;
  for (const auto& b : bars) max = std::max(max, b.value);
  int height = row * static_cast<int>(bars.size()) + 4;
  std::string out = fmt::format(
      "<svg class=\"chart bars\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">"
      "<title>{}</title>",
      width, height, width, height, EscapeHtml(title));
  for (size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    double w = max > 0 && std::isfinite(b.value) ? std::max(1.0, b.value / max * bar_w) : 0;
    int y = static_cast<int>(i) * row + 2;
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"lbl\">{}</text>"
        "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>"
        "<text x=\"{:.1f}\" y=\"{}\" class=\"val\">{}</text>",
        label_w - 6, y + 14, EscapeHtml(b.label), label_w, y + 2, w, row - 6, b.color, label_w + w + 4,
        y + 14, EscapeHtml(b.text));
  }
  return out + "</svg>";
}

std::string StepChart(const std::vector<LineSeries>& series, int width, int height,
                      const std::string& x_label, const std::string& y_label) {
  const int left = 56, right = 12, top = 28, bottom = 36;  // the legend sits above the plot
  double xmax = 0, ymax = 0;
  for (const auto& s : series)
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (std::isfinite(s.x[i])) xmax = std::max(xmax, s.x[i]);
      if (std::isfinite(s.y[i])) ymax = std::max(ymax, s.y[i]);
    }
  double xstep = TickStep(xmax, 6), ystep = TickStep(ymax, 5);
  xmax = std::max(xstep, std::ceil(xmax / xstep) * xstep);
  ymax = std::max(ystep, std::ceil(ymax / ystep) * ystep);
  const double pw = width - left - right, ph = height - top - bottom;
  auto px = [&](double x) { return left + x / xmax * pw; };
  auto py = [&](double y) { return top + ph - y / ymax * ph; };
  std::string out = fmt::format(
      "<svg class=\"chart steps\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">"
      "<title>{} over {}</title>",
      width, height, width, height, EscapeHtml(y_label), EscapeHtml(x_label));
  for (double y = 0; y <= ymax + ystep / 2; y += ystep)
    out += fmt::format(
        "<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" class=\"tick\">{}</text>",
        left, width - right, py(y), py(y), left - 4, py(y) + 4, TickLabel(y));
  for (double x = 0; x <= xmax + xstep / 2; x += xstep)
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" class=\"tick\">{}</text>", px(x),
                       height - bottom + 16, TickLabel(x));
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" class=\"axis\">{}</text>", left + pw / 2,
                     height - 4, EscapeHtml(x_label));
  out += fmt::format("<text x=\"{}\" y=\"14\" class=\"axis\">{}</text>", 4, EscapeHtml(y_label));
  int legend_x = left + 8;
  for (const auto& s : series) {
    std::string points;
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      if (i > 0 && std::isfinite(s.y[i - 1]))  // hold the previous reading until this one
        points += fmt::format("{:.1f},{:.1f} ", px(s.x[i]), py(s.y[i - 1]));
      points += fmt::format("{:.1f},{:.1f} ", px(s.x[i]), py(s.y[i]));
    }
    out += fmt::format(
        "<polyline class=\"series\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" "
        "points=\"{}\"/>",
        s.color, points);
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\" class=\"tick\">{}</text>",
        legend_x, 5, s.color, legend_x + 14, 14, EscapeHtml(s.name));
    legend_x += 24 + 7 * static_cast<int>(s.name.size());
  }
  return out + "</svg>";
}

}  // namespace magneton::report
