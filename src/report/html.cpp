#include "report/html.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/diff/call_site.h"
#include "report/format.h"
#include "report/svg.h"
#include "report/timeline_svg.h"

namespace magneton::report {
namespace {

using analysis::DiffReport;
using analysis::Evidence;
using analysis::Finding;
using analysis::NamedCount;
using analysis::RunSummary;
using analysis::Verdict;

constexpr const char* kColorA = "#3b6fd4";
constexpr const char* kColorB = "#e07b24";
constexpr size_t kMaxRegionRows = 300;

constexpr const char* kStyle = R"css(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:18px 28px}header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;color:#c9d1e0}main{padding:8px 28px 40px;max-width:1200px}
section{margin-top:22px}h2{font-size:17px;border-bottom:1px solid #d5d9e0;padding-bottom:4px}
.cards{display:flex;gap:14px;flex-wrap:wrap}.card{background:#fff;border:1px solid #d5d9e0;border-radius:6px;padding:10px 14px;flex:1;min-width:300px}
.card h3{margin:0 0 6px;font-size:15px}.side-a{border-top:4px solid #3b6fd4}.side-b{border-top:4px solid #e07b24}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0}dt{color:#5b6476}dd{margin:0;word-break:break-all}
.notes li{color:#6a4b00}.finding{background:#fff;border:1px solid #d5d9e0;border-left:6px solid #999;border-radius:6px;padding:10px 14px;margin:12px 0}
.finding.waste{border-left-color:#c62828}.finding.trade-off{border-left-color:#d39e00}
.badge{display:inline-block;border-radius:3px;padding:0 6px;font-size:12px;color:#fff;background:#777;margin-right:6px}
.badge.waste{background:#c62828}.badge.trade-off{background:#d39e00}.badge.ev{background:#4a5a78}
.label{font-weight:600;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}
.nums{color:#3a4254;margin:6px 0}.why{color:#5b6476}.evidence{margin:6px 0 0 0}
table{border-collapse:collapse;background:#fff;width:100%}td,th{border:1px solid #e1e4ea;padding:3px 6px;text-align:left;vertical-align:top;font-size:13px}
th{background:#eef0f4}code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.fix{background:#eaf6ec;border:1px solid #b9e0c0;border-radius:4px;padding:6px 10px;margin-top:6px}
svg .lbl,svg .val,svg .tick{font-size:11px;fill:#3a4254}svg .axis{font-size:12px;fill:#1d2330}svg .grid{stroke:#e1e4ea}
.muted{color:#8a92a3}details summary{cursor:pointer}
)css";

// Marks the body with what actually laid out, so a headless browser can check the rendering.
constexpr const char* kSelfCheck = R"js(
(function(){var n=0;document.querySelectorAll('svg rect.bar,svg polyline.series').forEach(function(e){var r=e.getBoundingClientRect();if(r.width>0&&r.height>=0)n++;});
document.body.setAttribute('data-rendered-marks',String(n));document.body.setAttribute('data-findings',String(document.querySelectorAll('article.finding').length));})();
)js";

std::string E(const std::string& s) { return EscapeHtml(s); }

std::string RunCard(char side, const std::string& path, const RunSummary& r, const std::string& unit) {
  std::string dl;
  auto row = [&](const char* k, const std::string& v) {
    dl += fmt::format("<dt>{}</dt><dd>{}</dd>", k, E(v));
  };
  row("file", path);
  if (!r.label.empty()) row("label", r.label);
  row("command", r.command.empty() ? "-" : r.command);
  row("host", r.host.empty() ? "-" : r.host);
  row("devices", r.devices.empty() ? "-" : fmt::format("{}", fmt::join(r.devices, ", ")));
  row("energy", unit == "J" ? FormatJoules(r.joules) : "unmeasured");
  row("time", FormatSeconds(r.seconds));
  row("iterations", std::to_string(r.iterations));
  row("measured by", r.energy_methods.empty() ? "-" : fmt::format("{}", fmt::join(r.energy_methods, "; ")));
  row("recorded", fmt::format("{} ops, {} kernels{}", r.ops, r.kernels, r.has_replays ? ", replays" : ""));
  if (const auto& a = r.account; a.available) {
    auto share = [&](double x) { return a.total > 0 ? FormatPct(x / a.total * 100) : std::string("-"); };
    row("per iteration",
        fmt::format("{} in {} ({} timeline, {} repetitions{}); busy {}, {} {}", FormatCost(a.total, unit),
                    FormatSeconds(a.seconds), a.on_device ? "device" : "host", a.periods,
                    a.on_device && !std::isnan(a.host_seconds) ? "; host " + FormatSeconds(a.host_seconds) : "",
                    FormatSeconds(a.busy_seconds), a.on_device ? "idle" : "outside operators",
                    FormatSeconds(a.idle_seconds)));
    row("where it goes",
        fmt::format("regions {} ({}), ops in no region {} ({}), {} {} ({}), unattributed {} ({})",
                    FormatCost(a.regions, unit), share(a.regions), FormatCost(a.unmatched, unit), share(a.unmatched),
                    a.on_device ? "idle after the iteration" : "host after the last operator", FormatCost(a.idle, unit),
                    share(a.idle), FormatCost(a.unattributed, unit), share(a.unattributed)));
  }
  if (r.untraced) row("as the program runs", FormatUntraced(*r.untraced));
  return fmt::format("<div class=\"card side-{}\"><h3>run {}</h3><dl>{}</dl></div>", side, side, dl);
}

std::string CountsTable(const std::vector<NamedCount>& a, const std::vector<NamedCount>& b,
                        const char* what) {
  auto cell = [](const std::vector<NamedCount>& v) {
    if (v.empty()) return std::string("<span class=\"muted\">none</span>");
    std::string s;
    for (const auto& n : v) {
      s += fmt::format("<div><code>{}</code>{}", E(n.name),
                       n.count > 1 ? fmt::format(" &times;{}", n.count) : "");
      auto site = analysis::Describe(n.call_site);
      if (!site.empty()) s += fmt::format(" <span class=\"muted\">at {}</span>", E(site));
      s += "</div>";
    }
    return s;
  };
  return fmt::format(
      "<table class=\"counts\"><tr><th>{} only in a</th><th>{} only in b</th></tr>"
      "<tr><td>{}</td><td>{}</td></tr></table>",
      what, what, cell(a), cell(b));
}

std::string EvidenceHtml(const Evidence& e) {
  std::string out = fmt::format("<div class=\"evidence\"><span class=\"badge ev\">{}</span>{}",
                                analysis::ToString(e.kind), E(e.summary));
  if (e.kind == analysis::EvidenceClass::kOperators) out += CountsTable(e.only_a, e.only_b, "operators");
  if (e.kind == analysis::EvidenceClass::kKernels) out += CountsTable(e.only_a, e.only_b, "kernels");
  const auto& d = e.divergence;
  if (d.depth >= 0 && (!d.frame_a.empty() || !d.frame_b.empty()))
    out += fmt::format(
        "<div>Call paths part after {} common frame{}{}: a <code>{}</code>, b <code>{}</code></div>", d.depth,
        d.depth == 1 ? "" : "s",
        d.common.empty() ? "" : " (last shared: <code>" + E(analysis::Describe(d.common)) + "</code>)",
        E(analysis::Describe(d.frame_a)), E(analysis::Describe(d.frame_b)));
  if (!e.config.empty() || !e.params.empty()) {
    out += "<table><tr><th>what differs</th><th>a</th><th>b</th></tr>";
    for (const auto& c : e.config)
      out += fmt::format("<tr><td>config <code>{}</code></td><td>{}</td><td>{}</td></tr>", E(c.key),
                         E(c.value_a), E(c.value_b));
    for (const auto& p : e.params)
      out += fmt::format("<tr><td>{} <code>{}</code></td><td>{}</td><td>{}</td></tr>", E(p.subject),
                         E(p.parameter), E(p.value_a), E(p.value_b));
    out += "</table>";
  }
  return out + "</div>";
}

// `index`: the finding's place in DiffReport::findings, which the timeline's items name.
std::string FindingHtml(const Finding& f, size_t index, const DiffReport& r) {
  const std::string& u = r.cost_unit;
  std::string verdict = analysis::ToString(f.verdict);
  std::string out = fmt::format(
      "<article class=\"finding {}\" id=\"finding-{}\" data-finding=\"{}\"><div><span class=\"badge {}\">#{} "
      "{}</span><span class=\"label\">{}</span></div>",
      verdict, f.rank, index, verdict, f.rank, verdict, E(f.label));
  out += fmt::format(
      "<div class=\"nums\">saves <b>{}</b> per iteration ({} of the run) &middot; {} costlier by {} "
      "&middot; time {} &middot; {} region{} &middot; {}</div>",
      FormatCost(f.saved_per_iteration, u), FormatPct(f.saved_pct_of_run), f.costly,
      FormatPct(f.cost_delta_pct), FormatPct(f.time_delta_pct, true), f.regions.size(),
      f.regions.size() == 1 ? "" : "s",
      f.outputs_compared ? fmt::format("outputs differ by {:.2g}%", f.output_rel_diff * 100)
                         : fmt::format("outputs not compared (matched by {})",
                                       r.matched_by_kernels ? "kernel sequence" : "NVTX range name"));
  out += BarChart({{"a", f.a.cost(), FormatCost(f.a.cost(), u), kColorA},
                   {"b", f.b.cost(), FormatCost(f.b.cost(), u), kColorB}},
                  520, u == "J" ? "energy of a and b" : "time of a and b (energy unmeasured)");
  out += fmt::format("<div class=\"why\">{}</div>", E(f.why));
  for (const auto& e : f.evidence) out += EvidenceHtml(e);
  for (const auto& h : f.rules)
    out += fmt::format("<div class=\"fix\"><b>{}</b> <span class=\"muted\">({})</span><br>{}</div>",
                       E(h.title), E(h.id), E(h.recommendation));
  return out + "</article>";
}

std::string RegionsTable(const DiffReport& r) {
  std::vector<size_t> order(r.regions.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto size = [&](size_t i) { return std::max(r.regions[i].a.cost(), r.regions[i].b.cost()); };
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return size(x) > size(y); });
  double max = order.empty() ? 0 : size(order.front());
  auto ops = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size() && i < 6; ++i) s += fmt::format("<div><code>{}</code></div>", E(v[i]));
    if (v.size() > 6) s += fmt::format("<div class=\"muted\">+{} more</div>", v.size() - 6);
    return s;
  };
  auto bar = [&](double v, const char* color) {
    double w = max > 0 && std::isfinite(v) ? std::max(1.0, v / max * 140) : 0;
    return fmt::format(
        "<svg width=\"150\" height=\"14\"><rect class=\"bar\" x=\"0\" y=\"2\" width=\"{:.1f}\" "
        "height=\"10\" fill=\"{}\"/></svg><div class=\"mono\">{}</div>",
        w, color, FormatCost(v, r.cost_unit));
  };
  const char* what = r.matched_by_range ? "NVTX range" : "operators";
  std::string out = fmt::format(
      "<table id=\"region-table\"><tr><th>region</th><th>finding</th><th>{} in a</th><th>a</th>"
      "<th>b</th><th>{} in b</th></tr>",
      what, what);
  for (size_t k = 0; k < order.size() && k < kMaxRegionRows; ++k) {
    const auto& p = r.regions[order[k]];
    std::string finding = "-";
    if (p.finding >= 0 && p.finding < static_cast<int>(r.findings.size())) {
      const auto& f = r.findings[p.finding];
      finding = f.rank > 0 ? fmt::format("<a href=\"#finding-{}\">#{} {}</a>", f.rank, f.rank,
                                         analysis::ToString(f.verdict))
                           : "noise";
    }
    out += fmt::format(
        "<tr class=\"region\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        p.region, finding, ops(p.ops_a), bar(p.a.cost(), kColorA), bar(p.b.cost(), kColorB), ops(p.ops_b));
  }
  out += "</table>";
  if (order.size() > kMaxRegionRows)
    out += fmt::format("<p class=\"muted\">{} smaller regions not shown (all are in --json).</p>",
                       order.size() - kMaxRegionRows);
  return out;
}

// Power in watts over the run: the power sensor, else derived from the energy counter.
std::vector<LineSeries> PowerSeries(const Run& run, const char* side, const char* color) {
  std::vector<LineSeries> out;
  int64_t t0 = run.info.start_ns;
  for (const auto& dev : run.devices) {
    const SensorSeries* s = run.FindSeries(dev.id, "power.instant");
    if (!s || s->t_ns.empty()) s = run.FindSeries(dev.id, "power.usage");
    LineSeries line;
    line.name = fmt::format("{} {}", side, dev.name.empty() ? dev.kind : dev.name);
    line.color = color;
    if (s && !s->t_ns.empty()) {
      if (t0 <= 0) t0 = s->t_ns.front();
      for (size_t i = 0; i < s->t_ns.size(); ++i) {
        line.x.push_back((s->t_ns[i] - t0) * 1e-9);
        line.y.push_back(s->value[i]);
      }
    } else if (const SensorSeries* e = run.FindSeries(dev.id, "energy.total"); e && e->t_ns.size() > 1) {
      if (t0 <= 0) t0 = e->t_ns.front();
      line.name += " (from energy counter)";
      for (size_t i = 1; i < e->t_ns.size(); ++i) {
        double dt = (e->t_ns[i] - e->t_ns[i - 1]) * 1e-9;
        if (dt <= 0) continue;
        line.x.push_back((e->t_ns[i] - t0) * 1e-9);
        line.y.push_back((e->value[i] - e->value[i - 1]) / dt);
      }
    }
    if (!line.x.empty()) out.push_back(std::move(line));
  }
  return out;
}

std::string PowerSection(const Run& a, const Run& b) {
  std::string out;
  for (auto [run, side, color] : {std::tuple{&a, "a", kColorA}, std::tuple{&b, "b", kColorB}}) {
    auto series = PowerSeries(*run, side, color);
    if (series.empty()) {
      out += fmt::format(
          "<p class=\"muted\" id=\"power-{}-missing\">Run {}: no power or energy series was "
          "recorded (no NVML, RAPL or meter on that machine), so power over time is "
          "unavailable.</p>",
          side, side);
      continue;
    }
    out += fmt::format("<h3>run {}</h3>", side);
    out += StepChart(series, 900, 240, "seconds since the start of the run", "W");
  }
  return out;
}

}  // namespace

std::string RenderHtml(const DiffReport& r, const Run& a, const Run& b, const RunPaths& paths) {
  std::string out = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += fmt::format("<title>Magneton diff: {} vs {}</title><style>{}{}</style></head><body>", E(paths.a),
                     E(paths.b), kStyle, kTimelineStyle);
  out += fmt::format(
      "<header><h1>Magneton diff</h1><p>a = {} &nbsp; vs &nbsp; b = {} &middot; threshold {:.0f}% "
      "&middot; costs in {}</p></header><main>",
      E(paths.a), E(paths.b), r.options.threshold * 100,
      r.energy_measured ? "joules" : "seconds (energy unmeasured)");
  out += fmt::format("<section id=\"runs\"><h2>Runs</h2><div class=\"cards\">{}{}</div></section>",
                     RunCard('a', paths.a, r.a, r.cost_unit), RunCard('b', paths.b, r.b, r.cost_unit));
  if (!r.notes.empty()) {
    out += "<section id=\"notes\"><h2>Notes</h2><ul class=\"notes\">";
    for (const auto& n : r.notes) out += fmt::format("<li>{}</li>", E(n));
    out += "</ul></section>";
  }

  std::vector<Bar> ranked;
  int waste = 0, trade = 0, noise = 0;
  for (const auto& f : r.findings) {
    (f.verdict == Verdict::kWaste ? waste : f.verdict == Verdict::kTradeOff ? trade : noise)++;
    if (f.verdict != Verdict::kNoise && ranked.size() < 10)
      ranked.push_back({fmt::format("#{} {}", f.rank, analysis::ToString(f.verdict)), f.saved_per_iteration,
                        FormatCost(f.saved_per_iteration, r.cost_unit),
                        f.verdict == Verdict::kWaste ? "#c62828" : "#d39e00"});
  }
  out += fmt::format(
      "<section id=\"summary\"><h2>Summary</h2><p><b>{}</b> waste finding{}, {} trade-off{}, {} "
      "noise group{}; {} regions matched, holding {} of a's cost and {} of b's. Waste adds up to <b>{}</b> "
      "per iteration.</p>",
      waste, waste == 1 ? "" : "s", trade, trade == 1 ? "" : "s", noise, noise == 1 ? "" : "s",
      r.regions.size(), FormatPct(r.matched_share_a * 100), FormatPct(r.matched_share_b * 100),
      FormatCost(r.total_saved_per_iteration(), r.cost_unit));
  if (std::string c = CompareUntraced(r.a.untraced, r.b.untraced); !c.empty())
    out += fmt::format("<p>As the programs run: {}.</p>", E(c));
  if (!ranked.empty()) out += BarChart(ranked, 700, "saving per iteration by finding");
  out += "</section>";
  out += TimelineSection(r);

  out += "<section id=\"findings\"><h2>Findings</h2>";
  if (waste + trade == 0)
    out += fmt::format("<p id=\"no-findings\">No waste and no trade-off at the {:.0f}% threshold.</p>",
                       r.options.threshold * 100);
  for (size_t i = 0; i < r.findings.size(); ++i)
    if (r.findings[i].verdict != Verdict::kNoise) out += FindingHtml(r.findings[i], i, r);
  if (noise > 0) {
    out += fmt::format(
        "<details><summary>{} noise group{}</summary><table><tr><th>region group</th><th>a</th>"
        "<th>b</th><th>why</th></tr>",
        noise, noise == 1 ? "" : "s");
    for (const auto& f : r.findings)
      if (f.verdict == Verdict::kNoise)
        out +=
            fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>", E(f.label),
                        FormatCost(f.a.cost(), r.cost_unit), FormatCost(f.b.cost(), r.cost_unit), E(f.why));
    out += "</table></details>";
  }
  out += "</section>";

  out += fmt::format("<section id=\"regions\"><h2>Matched regions, side by side</h2>{}</section>",
                     RegionsTable(r));
  out += fmt::format("<section id=\"power\"><h2>Power over time</h2>{}</section>", PowerSection(a, b));
  if (!r.config.empty()) {
    out +=
        "<section id=\"config\"><h2>Configuration that "
        "differs</h2><table><tr><th>key</th><th>a</th><th>b</th></tr>";
    for (const auto& c : r.config)
      out += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>", E(c.key), E(c.value_a),
                         E(c.value_b));
    out += "</table></section>";
  }
  out += fmt::format("<footer><p class=\"muted\">magneton {} &middot; JSON schema {}</p></footer></main>",
                     MAGNETON_VERSION, DiffReport::kSchemaVersion);
  out += fmt::format("<script>{}{}</script></body></html>\n", kTimelineScript, kSelfCheck);
  return out;
}

}  // namespace magneton::report
