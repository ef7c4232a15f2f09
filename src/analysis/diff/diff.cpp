#include "analysis/diff/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include <fmt/core.h>
#include <fmt/format.h>

#include "analysis/diff/call_site.h"
#include "analysis/diff/region_cost.h"
#include "analysis/diff/root_cause.h"

namespace magneton::analysis {

const char* ToString(Verdict v) {
  switch (v) {
    case Verdict::kWaste: return "waste";
    case Verdict::kTradeOff: return "trade-off";
    case Verdict::kNoise: return "noise";
  }
  return "?";
}

const char* ToString(EvidenceClass e) {
  switch (e) {
    case EvidenceClass::kOperators: return "operators";
    case EvidenceClass::kKernels: return "kernels";
    case EvidenceClass::kLaunch: return "launch";
    case EvidenceClass::kNone: return "none";
  }
  return "?";
}

const char* ToString(CostSource s) {
  switch (s) {
    case CostSource::kReplay: return "replay";
    case CostSource::kAttributed: return "attributed";
    case CostSource::kMixed: return "replay+attributed";
    case CostSource::kTime: return "time";
  }
  return "?";
}

int DiffReport::waste_count() const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(),
                                        [](const Finding& f) { return f.verdict == Verdict::kWaste; }));
}

double DiffReport::total_saved_per_iteration() const {
  double s = 0;
  for (const auto& f : findings)
    if (f.verdict == Verdict::kWaste) s += f.saved_per_iteration;
  return s;
}

namespace {

int64_t Iterations(const Run& run, const DiffOptions& o) {
  if (o.iterations > 0) return o.iterations;
  auto it = run.info.extra.find("iterations");
  if (it != run.info.extra.end()) {
    char* end = nullptr;
    long long n = std::strtoll(it->second.c_str(), &end, 10);
    if (end && *end == '\0' && n > 0) return n;
  }
  return 1;
}

RunSummary Summarize(const Run& run, const CostModel& cost, const energy::Attribution& energy,
                     const DiffOptions& o) {
  // `energy` is the measured pass's when there is one: that is where costs come from.
  RunSummary s;
  s.command = run.info.command;
  s.host = run.info.host;
  if (auto it = run.info.extra.find("label"); it != run.info.extra.end()) s.label = it->second;
  s.energy_measured = cost.energy_measured();
  s.measured_repeats = cost.measured_repeats();
  s.has_replays = cost.used_replays();
  s.has_kernels = cost.has_kernels();
  auto whole = cost.WholeRun();
  s.joules = whole.joules;
  s.seconds = whole.seconds;
  s.iterations = Iterations(run, o);
  s.ops = static_cast<int64_t>(run.ops.size());
  s.kernels = static_cast<int64_t>(run.kernels.size());
  for (const auto& d : run.devices) s.devices.push_back(fmt::format("{} {}", d.kind, d.name));
  for (const auto& d : energy.devices) {
    std::string name = d.device >= 0 && d.device < static_cast<int32_t>(run.devices.size())
                           ? run.devices[d.device].name
                           : fmt::format("device {}", d.device);
    s.energy_methods.push_back(fmt::format("{}: {}", name, d.method));
  }
  return s;
}

std::vector<ConfigDelta> ConfigDiff(const Run& a, const Run& b) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a.config) keys.insert(k);
  for (const auto& [k, v] : b.config) keys.insert(k);
  std::vector<ConfigDelta> out;
  for (const auto& k : keys) {
    auto ia = a.config.find(k), ib = b.config.find(k);
    std::string va = ia == a.config.end() ? "<unset>" : ia->second;
    std::string vb = ib == b.config.end() ? "<unset>" : ib->second;
    if (va != vb) out.push_back({k, va, vb});
  }
  return out;
}

// For host (CPU wall) times: how much longer b's matched regions take than
// a's, typically: the median of the per-region log ratios, so the few regions
// that really differ (or stalled) do not move it.
double HostSpeedRatio(const std::vector<SideCost>& a, const std::vector<SideCost>& b) {
  std::vector<double> logs;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].cost() > 0 && b[i].cost() > 0) logs.push_back(std::log(b[i].cost() / a[i].cost()));
  if (logs.size() < 5) return 1;  // too few regions to tell the machine from the code
  std::nth_element(logs.begin(), logs.begin() + static_cast<std::ptrdiff_t>(logs.size() / 2), logs.end());
  return std::exp(logs[logs.size() / 2]);
}

// Compute-op names with their call sites: regions that repeat the same code
// (every layer, every iteration) share this key and become one finding.
std::string GroupKey(const RegionSide& side, std::vector<std::string>* names) {
  std::vector<std::string> parts;
  auto compute = ComputeOps(side);
  if (compute.empty()) compute = *side.ops;  // only metadata: still group by what it is
  for (auto id : compute) {
    const Op& op = side.run->ops[id];
    if (names) names->push_back(op.name);
    parts.push_back(op.name + "@" + Describe(UserCallSite(*side.run, op.stack)));
  }
  std::sort(parts.begin(), parts.end());
  return fmt::format("{}", fmt::join(parts, ";"));
}

std::string OpsPhrase(std::vector<std::string> names) {
  std::map<std::string, int> counts;
  std::vector<std::string> order;
  for (auto& n : names)
    if (counts[n]++ == 0) order.push_back(n);
  std::vector<std::string> parts;
  for (const auto& n : order) parts.push_back(counts[n] > 1 ? fmt::format("{} x{}", n, counts[n]) : n);
  if (parts.size() > 4) {
    size_t more = parts.size() - 3;
    parts.resize(3);
    parts.push_back(fmt::format("{} more", more));
  }
  return parts.empty() ? "(no ops)" : fmt::format("{}", fmt::join(parts, " + "));
}

void AddInstance(SideCost& total, const SideCost& one) {
  if (total.instances.empty()) {
    total = one;
    return;
  }
  total.seconds += one.seconds;
  if (!std::isnan(total.joules) && !std::isnan(one.joules)) total.joules += one.joules;
  else total.joules = kUnmeasured;
  if (total.source != one.source) {
    bool any_replay = total.source == CostSource::kReplay || one.source == CostSource::kReplay ||
                      total.source == CostSource::kMixed || one.source == CostSource::kMixed;
    total.source = std::isnan(total.joules) ? CostSource::kTime
                   : any_replay              ? CostSource::kMixed
                                             : CostSource::kAttributed;
  }
  total.instances.push_back(one.cost());
}

double Pct(double hi, double lo) { return lo > 0 ? (hi / lo - 1) * 100 : (hi > 0 ? INFINITY : 0); }

// Verdict and its reason, from the totals and the per-instance ratios.
void Classify(Finding& f, double whole_costly, const DiffOptions& o, bool energy) {
  const SideCost& hi = f.costly == 'a' ? f.a : f.b;
  const SideCost& lo = f.costly == 'a' ? f.b : f.a;
  double h = hi.cost(), l = lo.cost();
  f.cost_delta_pct = Pct(h, l);
  f.time_delta_pct = Pct(hi.seconds, lo.seconds);
  // Spread of the per-instance log ratio: how much one instance says.
  std::vector<double> logs;
  for (size_t i = 0; i < hi.instances.size() && i < lo.instances.size(); ++i)
    if (hi.instances[i] > 0 && lo.instances[i] > 0) logs.push_back(std::log(hi.instances[i] / lo.instances[i]));
  double mean = 0, sd = 0;
  for (double x : logs) mean += x;
  if (!logs.empty()) mean /= static_cast<double>(logs.size());
  for (double x : logs) sd += (x - mean) * (x - mean);
  if (logs.size() > 1) sd = std::sqrt(sd / static_cast<double>(logs.size() - 1));
  f.noise_pct = sd * 100;
  double se = logs.size() > 1 ? sd / std::sqrt(static_cast<double>(logs.size())) : 0;
  double share = whole_costly > 0 ? h / whole_costly : 0;
  const char* what = energy ? "energy" : "time (energy unmeasured)";

  f.verdict = Verdict::kNoise;
  if (h <= 0) {
    f.why = "no measurable cost on either side";
  } else if (f.cost_delta_pct < o.threshold * 100) {
    f.why = fmt::format("{:.1f}% apart in {}, under the {:.0f}% threshold", f.cost_delta_pct, what,
                        o.threshold * 100);
  } else if (share < o.min_share) {
    f.why = fmt::format("{:.3f}% of the run: too small to resolve (minimum {:.2f}%)", share * 100,
                        o.min_share * 100);
  } else if (logs.size() >= 2 && mean <= o.significance * se) {
    f.why = fmt::format("not consistent over {} instances (per-instance spread {:.0f}%)",
                        logs.size(), f.noise_pct);
  } else if (energy && hi.seconds < lo.seconds * (1 - o.max_speedup)) {
    f.verdict = Verdict::kTradeOff;
    f.why = fmt::format("spends {:.1f}% more energy to run {:.1f}% faster", f.cost_delta_pct,
                        (1 - hi.seconds / lo.seconds) * 100);
  } else if (f.output_rel_diff > o.output_tolerance) {
    f.verdict = Verdict::kTradeOff;
    f.why = fmt::format("spends {:.1f}% more {}, but the outputs differ by {:.2g}% (tolerance {:.2g}%)",
                        f.cost_delta_pct, what, f.output_rel_diff * 100, o.output_tolerance * 100);
  } else {
    f.verdict = Verdict::kWaste;
    f.why = energy ? fmt::format("{:.1f}% more energy, time {:+.1f}%, outputs agree within {:.2g}%",
                                 f.cost_delta_pct, f.time_delta_pct, f.output_rel_diff * 100)
                   : fmt::format("{:.1f}% more time (energy unmeasured), outputs agree within {:.2g}%",
                                 f.cost_delta_pct, f.output_rel_diff * 100);
  }
}

}  // namespace

DiffReport Diff(const Run& a, const Run& b, const MatchResult& match,
                const energy::Attribution& energy_a, const energy::Attribution& energy_b,
                const DiffOptions& options) {
  return std::move(Diff(DiffInput{&a, &energy_a}, DiffInput{&b, &energy_b}, match, options)).value();
}

Result<DiffReport> Diff(const DiffInput& in_a, const DiffInput& in_b, const MatchResult& match,
                        const DiffOptions& options) {
  const Run& a = *in_a.run;
  const Run& b = *in_b.run;
  DiffReport report;
  report.options = options;
  CostModel ca(a, *in_a.energy), cb(b, *in_b.energy);
  std::unique_ptr<CostModel> ma, mb;
  for (auto [in, cost, measured, side] :
       {std::tuple{&in_a, &ca, &ma, 'a'}, std::tuple{&in_b, &cb, &mb, 'b'}}) {
    if (!in->measured) {
      auto fp = in->run->info.extra.find("fingerprints");
      if (fp != in->run->info.extra.end() && fp->second == "true")
        report.notes.push_back(fmt::format(
            "run {} was recorded with fingerprints and no measured pass was given: its times and energy include "
            "the fingerprinting (record a pass without fingerprints and pass it with --measured-{})",
            side, side));
      continue;
    }
    auto alignment = AlignPasses(*in->run, *in->measured);
    if (!alignment.ok())
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("measured pass of run {}: {}", side, alignment.error().message));
    *measured = std::make_unique<CostModel>(*in->measured, *in->measured_energy);
    cost->UseMeasuredPass(measured->get(), std::move(*alignment));
    report.notes.push_back(fmt::format(
        "run {}: time and energy from its measured pass ({} repetition{} of the recorded operators)", side,
        cost->measured_repeats(), cost->measured_repeats() == 1 ? "" : "s"));
  }
  const energy::Attribution& energy_a = in_a.measured ? *in_a.measured_energy : *in_a.energy;
  const energy::Attribution& energy_b = in_b.measured ? *in_b.measured_energy : *in_b.energy;
  report.a = Summarize(a, ca, energy_a, options);
  report.b = Summarize(b, cb, energy_b, options);
  // Energy compares with energy only; one unmeasured side makes both time.
  report.energy_measured = ca.energy_measured() && cb.energy_measured();
  report.cost_unit = report.energy_measured ? "J" : "s";
  if (!report.energy_measured) {
    if (ca.energy_measured() != cb.energy_measured())
      report.notes.push_back(fmt::format(
          "energy was measured in run {} only: both sides are compared by time",
          ca.energy_measured() ? 'a' : 'b'));
    else
      report.notes.push_back(
          "energy unmeasured in both runs (no energy or power sensor): time stands in for energy, "
          "so a finding means more time for the same result");
    report.a.joules = report.b.joules = kUnmeasured;
  }
  if (report.a.has_replays || report.b.has_replays)
    report.notes.push_back("operator energy from replay measurements where present, else attributed");
  if (report.a.iterations != report.b.iterations)
    report.notes.push_back(fmt::format("the runs ran {} and {} iterations: savings are per iteration of run a",
                                       report.a.iterations, report.b.iterations));
  report.config = ConfigDiff(a, b);
  if (!report.energy_measured) {
    ca.UseTimeOnly();
    cb.UseTimeOnly();
    if (!report.a.has_kernels && !report.b.has_kernels) {
      ca.UseFastestRepetition();
      cb.UseFastestRepetition();
    }
  }

  // Group the regions that repeat the same code.
  std::map<std::string, size_t> group_of;
  std::vector<Finding> groups;
  std::vector<std::vector<std::string>> names_a, names_b;
  std::vector<const RegionMatch*> representative;
  std::vector<double> representative_cost;
  std::vector<size_t> region_group;
  double matched_a = 0, matched_b = 0;
  std::vector<SideCost> costs_a, costs_b;
  for (const auto& r : match.regions) {
    costs_a.push_back(ca.Cost(r.ops_a));
    costs_b.push_back(cb.Cost(r.ops_b));
  }
  double scale_b = 1;  // b's host times are divided by this
  if (!report.energy_measured && !report.a.has_kernels && !report.b.has_kernels && options.normalize_host_time) {
    scale_b = HostSpeedRatio(costs_a, costs_b);
    if (std::fabs(std::log(scale_b)) > 0.02) {
      for (auto& c : costs_b) {
        c.seconds /= scale_b;
        for (auto& x : c.instances) x /= scale_b;
      }
      report.host_time_ratio = scale_b;
      report.notes.push_back(fmt::format(
          "host times: run b ran {:.2f}x as long as run a in the typical matched region (machine load or clocks "
          "differ between the recordings); b's times are divided by {:.2f} before comparing, so only regions that "
          "differ from the rest are found (--absolute-time to compare as measured)",
          scale_b, scale_b));
    }
  }
  for (size_t ri = 0; ri < match.regions.size(); ++ri) {
    const RegionMatch& r = match.regions[ri];
    RegionSide sa{&a, &ca, &r.ops_a}, sb{&b, &cb, &r.ops_b};
    std::vector<std::string> na, nb;
    std::string key = GroupKey(sa, &na) + " || " + GroupKey(sb, &nb);
    auto [it, fresh] = group_of.emplace(key, groups.size());
    if (fresh) {
      groups.emplace_back();
      names_a.push_back(std::move(na));
      names_b.push_back(std::move(nb));
      representative.push_back(&r);
      representative_cost.push_back(-1);
    }
    Finding& f = groups[it->second];
    SideCost cost_a = std::move(costs_a[ri]), cost_b = std::move(costs_b[ri]);
    // Instances pair up by position (repetition of the measured pass).
    size_t n = std::min(cost_a.instances.size(), cost_b.instances.size());
    cost_a.instances.resize(n);
    cost_b.instances.resize(n);
    matched_a += cost_a.cost();
    matched_b += cost_b.cost();
    f.regions.push_back(r.id);
    f.output_rel_diff = std::max(f.output_rel_diff, r.output_rel_diff);
    AddInstance(f.a, cost_a);
    AddInstance(f.b, cost_b);
    region_group.push_back(it->second);

    RegionPair pair;
    pair.region = r.id;
    for (auto id : r.ops_a) pair.ops_a.push_back(a.ops[id].name);
    for (auto id : r.ops_b) pair.ops_b.push_back(b.ops[id].name);
    pair.a = cost_a;
    pair.b = cost_b;
    pair.output_rel_diff = r.output_rel_diff;
    report.regions.push_back(std::move(pair));
    // The instance costliest on either side stands for the group in root cause.
    if (double c = std::max(cost_a.cost(), cost_b.cost()); c > representative_cost[it->second]) {
      representative_cost[it->second] = c;
      representative[it->second] = &r;
    }
  }
  double whole_a = report.a.cost(), whole_b = report.b.cost() / scale_b;
  report.matched_share_a = whole_a > 0 ? matched_a / whole_a : 0;
  report.matched_share_b = whole_b > 0 ? matched_b / whole_b : 0;
  report.unmatched_ops_a = static_cast<int64_t>(match.unmatched_a.size());
  report.unmatched_ops_b = static_cast<int64_t>(match.unmatched_b.size());
  if (match.regions.empty())
    report.notes.push_back(
        "no regions matched: record both runs with fingerprints (magneton.record(..., "
        "fingerprints=True)) on the same inputs");

  int64_t iterations = std::max<int64_t>(1, report.a.iterations);
  const bool host_time_only = !report.energy_measured && !report.a.has_kernels && !report.b.has_kernels;
  for (size_t g = 0; g < groups.size(); ++g) {
    Finding& f = groups[g];
    f.costly = f.a.cost() >= f.b.cost() ? 'a' : 'b';
    double hi = f.costly == 'a' ? f.a.cost() : f.b.cost();
    double lo = f.costly == 'a' ? f.b.cost() : f.a.cost();
    double whole = f.costly == 'a' ? whole_a : whole_b;
    Classify(f, whole, options, report.energy_measured);
    f.saved_per_iteration = (hi - lo) / static_cast<double>(iterations);
    f.saved_pct_of_run = whole > 0 ? (hi - lo) / whole * 100 : 0;
    std::string sa = OpsPhrase(names_a[g]), sb = OpsPhrase(names_b[g]);
    f.label = sa == sb ? sa : fmt::format("{} (a) vs {} (b)", sa, sb);
    if (f.verdict == Verdict::kNoise) continue;
    const RegionMatch& rep = *representative[g];
    RegionSide ra{&a, &ca, &rep.ops_a}, rb{&b, &cb, &rep.ops_b};
    auto rc = FindRootCause(ra, rb, f.costly, report.config, options.rules);
    f.evidence = std::move(rc.evidence);
    f.rules = std::move(rc.rules);
    // Host times of the very same code and layouts, with no configuration
    // key known to matter here: nothing but the machine can make them differ.
    if (host_time_only && f.evidence_class() == EvidenceClass::kNone && f.evidence[0].config.empty()) {
      f.verdict = Verdict::kNoise;
      f.why = fmt::format("{:.1f}% apart in host time, but both sides run the same operators on the same layouts, "
                          "and no configuration key that differs is known to matter here: machine noise, not the code",
                          f.cost_delta_pct);
      f.evidence.clear();
      f.rules.clear();
    }
    // Where the costly side's code runs, so the label points at a line.
    const RegionSide& costly = f.costly == 'a' ? ra : rb;
    auto compute = ComputeOps(costly);
    if (!compute.empty()) {
      auto site = Describe(UserCallSite(*costly.run, costly.run->ops[compute.front()].stack));
      if (!site.empty()) f.label += " at " + site;
    }
  }

  // Waste by joules saved, then trade-offs, then noise by size.
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto tier = [&](size_t i) { return static_cast<int>(groups[i].verdict); };
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (tier(x) != tier(y)) return tier(x) < tier(y);
    return groups[x].saved_per_iteration > groups[y].saved_per_iteration;
  });
  std::vector<int> new_index(groups.size());
  int rank = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    new_index[order[i]] = static_cast<int>(i);
    Finding& f = groups[order[i]];
    f.rank = f.verdict == Verdict::kNoise ? 0 : ++rank;
    report.findings.push_back(std::move(f));
  }
  for (size_t i = 0; i < report.regions.size(); ++i) report.regions[i].finding = new_index[region_group[i]];
  return report;
}

}  // namespace magneton::analysis
