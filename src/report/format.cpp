#include "report/format.h"

#include <fmt/core.h>

#include <cmath>

namespace magneton::report {
namespace {

// Three significant digits with an SI prefix chosen so the mantissa is >= 1.
std::string WithPrefix(double v, const char* unit) {
  if (std::isnan(v)) return "-";
  if (v == 0) return fmt::format("0 {}", unit);
  static const struct {
    double scale;
    const char* prefix;
  } kPrefixes[] = {{1e3, "k"}, {1, ""}, {1e-3, "m"}, {1e-6, "u"}, {1e-9, "n"}};
  double mag = std::fabs(v);
  for (const auto& p : kPrefixes)
    if (mag >= p.scale || p.scale == 1e-9) {
      double m = v / p.scale;
      int decimals = std::fabs(m) >= 100 ? 0 : std::fabs(m) >= 10 ? 1 : 2;
      return fmt::format("{:.{}f} {}{}", m, decimals, p.prefix, unit);
    }
  return fmt::format("{:.3g} {}", v, unit);
}

}  // namespace

std::string FormatJoules(double joules) { return WithPrefix(joules, "J"); }
std::string FormatSeconds(double seconds) { return WithPrefix(seconds, "s"); }

std::string FormatCost(double value, const std::string& unit) {
  return unit == "J" ? FormatJoules(value) : FormatSeconds(value);
}

std::string FormatPct(double pct, bool sign) {
  if (std::isnan(pct)) return "-";
  if (std::isinf(pct)) return pct > 0 ? "+inf" : "-inf";
  return sign ? fmt::format("{:+.1f}%", pct) : fmt::format("{:.1f}%", pct);
}

std::string FormatUntraced(const analysis::UntracedSteps& u) {
  if (u.steps < 1) return "no untraced steps measured";
  const std::string cost = !std::isnan(u.joules)
                               ? fmt::format("{} in {}", FormatJoules(u.joules), FormatSeconds(u.seconds))
                               : FormatSeconds(u.seconds);
  return fmt::format("{} per step, {} untraced steps", cost, u.steps);
}

std::string CompareUntraced(const std::optional<analysis::UntracedSteps>& a,
                            const std::optional<analysis::UntracedSteps>& b) {
  if (!a || !b || a->steps < 1 || b->steps < 1) return {};
  std::string time = fmt::format("{} time ({} against {})", FormatPct(ChangePct(a->seconds, b->seconds), true),
                                 FormatSeconds(a->seconds), FormatSeconds(b->seconds));
  if (std::isnan(a->joules) || std::isnan(b->joules)) return "b " + time + " per step";
  return fmt::format("b {} energy per step ({} against {}), {}", FormatPct(ChangePct(a->joules, b->joules), true),
                     FormatJoules(a->joules), FormatJoules(b->joules), time);
}

double ChangePct(double from, double to) { return from > 0 ? (to / from - 1) * 100 : NAN; }

std::string Shorten(const std::string& s, size_t n) {
  if (s.size() <= n || n < 4) return s;
  return s.substr(0, n - 3) + "...";
}

}  // namespace magneton::report
