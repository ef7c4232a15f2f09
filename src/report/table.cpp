#include "report/table.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <cmath>

#include "analysis/diff/call_site.h"
#include "report/format.h"

namespace magneton::report {
namespace {

using analysis::DiffReport;
using analysis::Evidence;
using analysis::EvidenceClass;
using analysis::Finding;
using analysis::NamedCount;
using analysis::RunSummary;
using analysis::Verdict;

struct Style {
  bool on;
  std::string operator()(const std::string& s, const char* code) const {
    return on ? fmt::format("\033[{}m{}\033[0m", code, s) : s;
  }
};
constexpr const char* kBold = "1";
constexpr const char* kDim = "2";
constexpr const char* kRed = "31";
constexpr const char* kYellow = "33";
constexpr const char* kGreen = "32";

const char* VerdictColor(Verdict v) {
  return v == Verdict::kWaste ? kRed : v == Verdict::kTradeOff ? kYellow : kDim;
}

std::string RunLine(char side, const std::string& path, const RunSummary& r, const std::string& unit) {
  std::string cost = unit == "J" ? fmt::format("{} in {}", FormatJoules(r.joules), FormatSeconds(r.seconds))
                                 : fmt::format("{} (energy unmeasured)", FormatSeconds(r.seconds));
  std::string devices = r.devices.empty() ? "CPU only" : fmt::format("{}", fmt::join(r.devices, ", "));
  // From a measured pass the cost is per repetition of the recorded step.
  std::string iterations = r.measured_repeats > 0
                               ? fmt::format("per iteration ({} measured)", r.measured_repeats)
                               : fmt::format("{} iteration{}", r.iterations, r.iterations == 1 ? "" : "s");
  std::string line = fmt::format("  {} = {}: {}, {}, {}", side, path, cost, iterations, devices);
  if (!r.energy_methods.empty()) line += fmt::format(" [{}]", fmt::join(r.energy_methods, "; "));
  if (!r.label.empty()) line += fmt::format(" label={}", r.label);
  return line + "\n";
}

// One iteration of the run on its timeline and where its cost went (accounting.h).
std::string AccountLine(char side, const RunSummary& r, const std::string& unit) {
  const analysis::IterationAccount& a = r.account;
  if (!a.available) return {};
  auto share = [&](double x) { return a.total > 0 ? FormatPct(x / a.total * 100) : std::string("-"); };
  std::string host = a.on_device && !std::isnan(a.host_seconds)
                         ? fmt::format(", host {}", FormatSeconds(a.host_seconds))
                         : "";
  std::string total = unit == "J" ? fmt::format("{} in {}", FormatCost(a.total, unit), FormatSeconds(a.seconds))
                                  : FormatSeconds(a.seconds);
  std::string line = fmt::format("  {} per iteration ({} timeline, {} repetitions): {}{}; busy {}, {} {}\n", side,
                                 a.on_device ? "device" : "host", a.periods, total, host,
                                 FormatSeconds(a.busy_seconds), a.on_device ? "idle" : "outside operators",
                                 FormatSeconds(a.idle_seconds));
  line += fmt::format("      = regions {} ({}) + ops in no region {} ({}) + {} {} ({}) + unattributed {} ({})\n",
                      FormatCost(a.regions, unit), share(a.regions), FormatCost(a.unmatched, unit),
                      share(a.unmatched), a.on_device ? "idle after the iteration" : "host after the last operator",
                      FormatCost(a.idle, unit), share(a.idle), FormatCost(a.unattributed, unit),
                      share(a.unattributed));
  if (a.waiting > 0)
    line += fmt::format("        ({}: {} ({}), counted with the {})\n",
                        a.on_device ? "the device waiting for launches inside the iteration"
                                    : "the program's own code between operators",
                        FormatCost(a.waiting, unit), share(a.waiting),
                        a.on_device ? "work it waited for" : "operator it issues");
  if (r.untraced) line += fmt::format("    as the program runs: {}\n", FormatUntraced(*r.untraced));
  return line;
}

std::string Counts(const std::vector<NamedCount>& v, size_t limit, size_t width) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < v.size() && i < limit; ++i) {
    std::string p = Shorten(v[i].name, width);
    if (v[i].count > 1) p += fmt::format(" x{}", v[i].count);
    auto site = analysis::Describe(v[i].call_site);
    if (!site.empty()) p += " at " + site;
    parts.push_back(p);
  }
  if (v.size() > limit) parts.push_back(fmt::format("... {} more", v.size() - limit));
  return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, "; "));
}

void RenderEvidence(std::string& out, const Evidence& e, const Style& st) {
  out += fmt::format("      {} {}\n", st(fmt::format("[{}]", analysis::ToString(e.kind)), kBold), e.summary);
  if (e.kind == EvidenceClass::kOperators || e.kind == EvidenceClass::kKernels) {
    size_t width = e.kind == EvidenceClass::kKernels ? 70 : 40;
    out += fmt::format("        a only: {}\n", Counts(e.only_a, 4, width));
    out += fmt::format("        b only: {}\n", Counts(e.only_b, 4, width));
  }
  const auto& d = e.divergence;
  // Parting at the outermost frame says nothing: two scripts of other names always do.
  if (d.depth > 0 && (!d.frame_a.empty() || !d.frame_b.empty())) {
    out += fmt::format("        call paths part after {} frame{}{}: a {} | b {}\n", d.depth,
                       d.depth == 1 ? "" : "s",
                       d.common.empty() ? "" : " (" + analysis::Describe(d.common) + ")",
                       d.frame_a.empty() ? "-" : analysis::Describe(d.frame_a),
                       d.frame_b.empty() ? "-" : analysis::Describe(d.frame_b));
  } else if (e.kind == EvidenceClass::kKernels && d.depth > 0) {
    out += fmt::format("        launch call paths the same down to {}: the kernel is chosen below it\n",
                       analysis::Describe(d.common));
  } else if (e.kind == EvidenceClass::kKernels && d.depth < 0) {
    out += "        launch call paths: not recorded\n";
  }
  for (const auto& c : e.config)
    out += fmt::format("        config {}: a={} b={}{}\n", c.key, c.value_a, c.value_b,
                       c.by_rule ? "" : " (differs; no rule names it)");
  for (const auto& p : e.params)
    out += fmt::format("        {} {}: a={} b={}\n", p.subject, p.parameter, p.value_a, p.value_b);
}

void RenderFinding(std::string& out, const Finding& f, const DiffReport& r, const Style& st) {
  const std::string& u = r.cost_unit;
  std::string verdict = st(fmt::format("{:<9}", analysis::ToString(f.verdict)), VerdictColor(f.verdict));
  out += fmt::format("{:>3}  {} {:>10} {:>7}  {:>10} {:>10} {:>8} {:>8}  {:<9} {}\n", f.rank, verdict,
                     FormatCost(f.saved_per_iteration, u), FormatPct(f.saved_pct_of_run),
                     FormatCost(f.a.cost(), u), FormatCost(f.b.cost(), u),
                     FormatPct(ChangePct(f.a.cost(), f.b.cost()), true),
                     FormatPct(ChangePct(f.a.seconds, f.b.seconds), true),
                     analysis::ToString(f.evidence_class()), f.regions.size());
  out += fmt::format("     {}\n", st(f.label, kBold));
  out += fmt::format("      why: {} ({} costlier)\n", f.why, f.costly);
  for (const auto& e : f.evidence) RenderEvidence(out, e, st);
  for (const auto& h : f.rules)
    out += fmt::format("      {} {}: {}\n", st("fix", kGreen), h.title, h.recommendation);
}

std::string Header(const DiffReport& r, const TableOptions& o, const char* what) {
  std::string out = fmt::format("{}\n", what);
  out += RunLine('a', o.path_a, r.a, r.cost_unit);
  out += RunLine('b', o.path_b, r.b, r.cost_unit);
  out += AccountLine('a', r.a, r.cost_unit);
  out += AccountLine('b', r.b, r.cost_unit);
  out += fmt::format("  matched {} region{} holding {} of a's cost per iteration and {} of b's; unmatched {}: a {}, b {}\n",
                     r.regions.size(), r.regions.size() == 1 ? "" : "s", FormatPct(r.matched_share_a * 100),
                     FormatPct(r.matched_share_b * 100),
                     r.matched_by_range ? "NVTX ranges" : r.matched_by_kernels ? "kernels" : "ops",
                     r.unmatched_ops_a, r.unmatched_ops_b);
  if (std::string c = CompareUntraced(r.a.untraced, r.b.untraced); !c.empty())
    out += fmt::format("  as the programs run: {}\n", c);
  for (const auto& n : r.notes) out += fmt::format("  note: {}\n", n);
  return out;
}

}  // namespace

std::string RenderDiffTable(const DiffReport& r, const TableOptions& o) {
  Style st{o.color};
  std::string out = Header(r, o, "magneton diff");
  int waste = 0, trade = 0, noise = 0;
  for (const auto& f : r.findings)
    (f.verdict == Verdict::kWaste ? waste : f.verdict == Verdict::kTradeOff ? trade : noise)++;
  out += "\n";
  out += st(fmt::format("{:>3}  {:<9} {:>10} {:>7}  {:>10} {:>10} {:>8} {:>8}  {:<9} {}\n", "#", "verdict",
                        "saved/it", "of run", "a", "b", "b vs a", "time", "evidence", "regions"),
            kBold);
  int shown = 0;
  for (const auto& f : r.findings) {
    if (f.verdict == Verdict::kNoise && !o.show_noise) continue;
    if (f.verdict != Verdict::kNoise && shown++ >= o.max_findings) continue;
    RenderFinding(out, f, r, st);
  }
  if (shown > o.max_findings)
    out += fmt::format("  ... {} more findings (see --json or --html)\n", shown - o.max_findings);
  if (noise > 0 && !o.show_noise) {
    out +=
        st(fmt::format("  {} region group{} within noise or under the {:.0f}% threshold (--all lists them)\n",
                       noise, noise == 1 ? "" : "s", r.options.threshold * 100),
           kDim);
    // The largest of them, when it is a visible share of the run: a near miss
    // the user may want to lower --threshold for.
    const Finding* top = nullptr;
    for (const auto& f : r.findings)
      if (f.verdict == Verdict::kNoise && (!top || f.saved_per_iteration > top->saved_per_iteration)) top = &f;
    if (top && top->saved_pct_of_run >= 1)
      out += st(fmt::format("  largest: {}: {} per iteration ({} of the run), {} costlier; {}\n", top->label,
                            FormatCost(top->saved_per_iteration, r.cost_unit), FormatPct(top->saved_pct_of_run),
                            top->costly, top->why),
                kDim);
  }
  out += "\n";
  if (waste > 0) {
    double pct = 0;
    for (const auto& f : r.findings)
      if (f.verdict == Verdict::kWaste) pct += f.saved_pct_of_run;
    out +=
        st(fmt::format("{} waste finding{}: {} per iteration could be saved ({} of the run); "
                       "{} trade-off{}\n",
                       waste, waste == 1 ? "" : "s", FormatCost(r.total_saved_per_iteration(), r.cost_unit),
                       FormatPct(pct), trade, trade == 1 ? "" : "s"),
           kBold);
  } else if (r.regions.empty()) {
    out += st("nothing compared: no region of the two runs matched (the notes above say why)\n", kBold);
  } else {
    out += st(fmt::format("no waste found at the {:.0f}% threshold; {} trade-off{}\n",
                          r.options.threshold * 100, trade, trade == 1 ? "" : "s"),
              kBold);
  }
  return out;
}

std::string RenderCheckTable(const DiffReport& r, const analysis::RegressionReport& c,
                             const TableOptions& o) {
  Style st{o.color};
  std::string out = Header(r, o, "magneton check (a = baseline, b = new)");
  out += fmt::format("  {}: {} -> {} ({})\n\n", c.whole_label, FormatCost(c.whole_base, r.cost_unit),
                     FormatCost(c.whole_now, r.cost_unit), FormatPct(c.whole_pct, true));
  if (!c.regressed()) {
    out += st(fmt::format("OK: nothing regressed more than {:.1f}%\n", c.max_regression * 100), kGreen);
    return out;
  }
  out += st(fmt::format("REGRESSED: {} item{} over {:.1f}%\n", c.regressions.size(),
                        c.regressions.size() == 1 ? "" : "s", c.max_regression * 100),
            kRed);
  for (const auto& g : c.regressions) {
    out += fmt::format("  {:>10} -> {:<10} {:>8}  {}\n", FormatCost(g.base, r.cost_unit),
                       FormatCost(g.now, r.cost_unit), FormatPct(g.pct, true), g.label);
    if (g.finding && !g.finding->evidence.empty())
      out += fmt::format("      {}\n", g.finding->evidence.front().summary);
  }
  return out;
}

}  // namespace magneton::report
