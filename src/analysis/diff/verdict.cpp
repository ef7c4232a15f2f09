#include "analysis/diff/verdict.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace magneton::analysis {
namespace {

double Pct(double hi, double lo) { return lo > 0 ? (hi / lo - 1) * 100 : (hi > 0 ? INFINITY : 0); }

}  // namespace

void AddInstance(SideCost& total, const SideCost& one, size_t regions_before) {
  if (regions_before == 0) {
    total = one;  // one region: its instances are its repetitions in the measured pass
    return;
  }
  // Several regions: one instance each. A region's repetitions would pair up
  // with the other side's only for the first region, and swamp the rest.
  if (regions_before == 1) total.instances = {total.cost()};
  total.seconds += one.seconds;
  total.wait_seconds += one.wait_seconds;
  if (!std::isnan(total.joules) && !std::isnan(one.joules))
    total.joules += one.joules;
  else
    total.joules = kUnmeasured;
  if (total.source != one.source) {
    bool any_replay = total.source == CostSource::kReplay || one.source == CostSource::kReplay ||
                      total.source == CostSource::kMixed || one.source == CostSource::kMixed;
    total.source = std::isnan(total.joules) ? CostSource::kTime
                   : any_replay             ? CostSource::kMixed
                                            : CostSource::kAttributed;
  }
  total.instances.push_back(one.cost());
}

void Judge(Finding& f, double whole_costly, const DiffOptions& o, bool energy) {
  const SideCost& hi = f.costly == 'a' ? f.a : f.b;
  const SideCost& lo = f.costly == 'a' ? f.b : f.a;
  double h = hi.cost(), l = lo.cost();
  f.cost_delta_pct = Pct(h, l);
  f.time_delta_pct = Pct(hi.seconds, lo.seconds);
  // What one instance says: the per-instance log ratio. An instance where a
  // side costs nothing (no device work of its own) has no log ratio; then
  // every instance's difference is tested instead, relative to the costlier
  // side's mean, so a region the lean side does for free is still tested.
  std::vector<double> logs, diffs;
  bool zero = false;
  double hi_mean = 0;
  const size_t n = std::min(hi.instances.size(), lo.instances.size());
  for (size_t i = 0; i < n; ++i) {
    const double x = hi.instances[i], y = lo.instances[i];
    if (x > 0 && y > 0) logs.push_back(std::log(x / y));
    zero = zero || ((x > 0) != (y > 0));
    diffs.push_back(x - y);
    hi_mean += x / static_cast<double>(n);
  }
  if (zero)
    for (double& d : diffs) d = hi_mean > 0 ? d / hi_mean : 0;
  const std::vector<double>& per = zero ? diffs : logs;
  double mean = 0, sd = 0;
  for (double x : per) mean += x;
  if (!per.empty()) mean /= static_cast<double>(per.size());
  for (double x : per) sd += (x - mean) * (x - mean);
  if (per.size() > 1) sd = std::sqrt(sd / static_cast<double>(per.size() - 1));
  f.noise_pct = sd * 100;
  double se = per.size() > 1 ? sd / std::sqrt(static_cast<double>(per.size())) : 0;
  double share = whole_costly > 0 ? h / whole_costly : 0;
  const char* what = energy ? "energy" : "time (energy unmeasured)";
  // "35.2% more energy", or what the lean side does for free has no ratio.
  const char lean = f.costly == 'a' ? 'b' : 'a';
  const std::string more =
      l > 0 ? fmt::format("{:.1f}% more {}", f.cost_delta_pct, what)
            : fmt::format("{:.3g} {} more {} where {} costs nothing measurable", h, energy ? "J" : "s", what, lean);

  f.verdict = Verdict::kNoise;
  if (h <= 0) {
    f.why = "no measurable cost on either side";
  } else if (f.cost_delta_pct < o.threshold * 100) {
    f.why = fmt::format("{:.1f}% apart in {}, under the {:.0f}% threshold", f.cost_delta_pct, what,
                        o.threshold * 100);
  } else if (share < o.min_share) {
    f.why = fmt::format("{:.3f}% of the run: too small to resolve (minimum {:.2f}%)", share * 100,
                        o.min_share * 100);
  } else if (per.size() >= 2 && mean <= o.significance * se) {
    f.why = fmt::format("not consistent over {} instances (per-instance spread {:.0f}%)", per.size(),
                        f.noise_pct);
  } else if (energy && hi.seconds < lo.seconds * (1 - o.max_speedup)) {
    f.verdict = Verdict::kTradeOff;
    f.why = fmt::format("spends {} to run {:.1f}% faster", more, (1 - hi.seconds / lo.seconds) * 100);
  } else if (f.output_rel_diff > o.output_tolerance) {
    f.verdict = Verdict::kTradeOff;
    f.why = fmt::format("spends {}, but the outputs differ by {:.2g}% (tolerance {:.2g}%)", more,
                        f.output_rel_diff * 100, o.output_tolerance * 100);
  } else {
    f.verdict = Verdict::kWaste;
    std::string outputs = f.outputs_compared
                              ? fmt::format("outputs agree within {:.2g}%", f.output_rel_diff * 100)
                              : std::string(kOutputsNotCompared);
    f.why = energy && lo.seconds > 0 ? fmt::format("{}, time {:+.1f}%, {}", more, f.time_delta_pct, outputs)
                                     : fmt::format("{}, {}", more, outputs);
  }
}

bool Separated(std::vector<double> hi, std::vector<double> lo) {
  constexpr size_t kMinRepetitions = 5;
  if (hi.size() < kMinRepetitions || lo.size() < kMinRepetitions) return false;
  auto quartile = [](std::vector<double>& v, size_t q) {
    auto at = v.begin() + static_cast<std::ptrdiff_t>(v.size() * q / 4);
    std::nth_element(v.begin(), at, v.end());
    return *at;
  };
  return quartile(hi, 1) > quartile(lo, 3);
}

std::vector<int> RankFindings(std::vector<Finding>& findings) {
  std::vector<size_t> order(findings.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto tier = [&](size_t i) { return static_cast<int>(findings[i].verdict); };
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (tier(x) != tier(y)) return tier(x) < tier(y);
    return findings[x].saved_per_iteration > findings[y].saved_per_iteration;
  });
  std::vector<int> new_index(findings.size());
  std::vector<Finding> ranked;
  ranked.reserve(findings.size());
  int rank = 0;
  for (size_t i : order) {
    new_index[i] = static_cast<int>(ranked.size());
    Finding& f = findings[i];
    f.rank = f.verdict == Verdict::kNoise ? 0 : ++rank;
    ranked.push_back(std::move(f));
  }
  findings = std::move(ranked);
  return new_index;
}

}  // namespace magneton::analysis
