#include "report/timeline_svg.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "report/format.h"
#include "report/svg.h"

namespace magneton::report {

using analysis::DiffReport;
using analysis::IterationTimeline;
using analysis::TimelineItem;
using analysis::Verdict;

const char* const kTimelineStyle = R"css(
.timeline svg{display:block;background:#fff;border:1px solid #d5d9e0;border-radius:4px;margin:8px 0}
.timeline .lane{font-size:11px;fill:#3a4254}.timeline .head{font-size:12px;fill:#1d2330}
.timeline .item{cursor:pointer}.timeline .idle{fill:#fbe3e3}.timeline .busy{fill:#dfe4ec}
.timeline .sync{fill:#7e57c2;fill-opacity:.35}.timeline .sync-mark{fill:#5e35b1}
.timeline .power{fill:none;stroke-width:1.4}.legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:4px 0}
.legend span{cursor:pointer;font-size:12px}.legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}
body.highlighting .timeline .item:not(.hl){opacity:.12}.timeline .item.hl{stroke:#000;stroke-width:.5}
article.finding{cursor:pointer}article.finding.hl{box-shadow:0 0 0 2px #1d2330}
)css";

// Clicking a finding card or a legend entry highlights the finding's items on
// the timeline (a second click clears it); #finding-N in the address does the
// same on load, so a link can point at a finding on the timeline.
const char* const kTimelineScript = R"js(
(function(){
function highlight(f){
  var on=f!==null&&f!==undefined;document.body.classList.toggle('highlighting',on);
  document.querySelectorAll('.timeline .item').forEach(function(e){e.classList.toggle('hl',on&&e.getAttribute('data-finding')===f);});
  document.querySelectorAll('article.finding').forEach(function(a){a.classList.toggle('hl',on&&a.getAttribute('data-finding')===f);});
  document.body.setAttribute('data-highlighted',String(document.querySelectorAll('.timeline .item.hl').length));
}
var current=null;
function toggle(f){current=current===f?null:f;highlight(current);var t=document.getElementById('timeline');if(current!==null&&t)t.scrollIntoView({block:'nearest'});}
document.querySelectorAll('[data-finding]').forEach(function(e){
  e.addEventListener('click',function(){toggle(e.getAttribute('data-finding'));});});
var at=location.hash?document.getElementById(location.hash.slice(1)):null;
if(at&&at.hasAttribute('data-finding')){current=at.getAttribute('data-finding');highlight(current);}
var n=0,regions={};document.querySelectorAll('.timeline .item').forEach(function(e){var r=e.getBoundingClientRect();
  if(r.width>0&&r.height>0){n++;var g=e.getAttribute('data-region');if(g!==null)regions[g]=1;}});
document.body.setAttribute('data-timeline-items',String(n));
document.body.setAttribute('data-timeline-regions',String(Object.keys(regions).length));
})();
)js";

namespace {

constexpr const char* kNoRegion = "#cfd8dc";   // operators no matched region holds
constexpr const char* kNoise = "#8fa3b8";      // regions within noise or under the threshold
constexpr const char* kRecorder = "#546e7a";   // the recorder's own work
constexpr const char* kTradeOff[] = {"#d39e00", "#f2c14e", "#b8860b"};
constexpr const char* kWaste[] = {"#c62828", "#ad1457", "#6a1b9a", "#d84315", "#4527a0", "#880e4f"};
constexpr const char* kPower[] = {"#3b6fd4", "#e07b24"};  // the sides' colours, as elsewhere in the report

constexpr int kWidth = 1100, kLeft = 150, kRight = 16;
constexpr int kLaneH = 18, kItemH = 14, kPowerH = 64;

std::string FindingColor(const DiffReport& r, int finding) {
  if (finding < 0 || finding >= static_cast<int>(r.findings.size())) return kNoRegion;
  const auto& f = r.findings[finding];
  if (f.verdict == Verdict::kWaste) return kWaste[(f.rank - 1) % std::size(kWaste)];
  if (f.verdict == Verdict::kTradeOff) return kTradeOff[(f.rank - 1) % std::size(kTradeOff)];
  return kNoise;
}

std::string Color(const DiffReport& r, const TimelineItem& it) {
  return it.recorder ? kRecorder : FindingColor(r, it.finding);
}

std::string Duration(int64_t ns) { return FormatSeconds(ns * 1e-9); }

// One side's SVG; x spans [0, scale_ns) and power [0, watts_top] so both sides share scales.
std::string SideSvg(const DiffReport& r, const IterationTimeline& t, char side, int64_t scale_ns, double watts_top) {
  const double pw = kWidth - kLeft - kRight;
  auto px = [&](int64_t ns) { return kLeft + static_cast<double>(ns) / static_cast<double>(scale_ns) * pw; };
  // Rows, top to bottom: the host's synchronizing calls (when there are
  // any), one lane per stream or thread, busy and idle, power, the time axis.
  const int sync_top = 30, lanes = static_cast<int>(t.lanes.size());
  const int lanes_top = sync_top + (t.syncs.empty() ? 0 : kLaneH);
  const int idle_top = lanes_top + lanes * kLaneH + 4;
  const int power_top = idle_top + kLaneH + 10;
  const bool power = !t.power_w.empty();
  const int axis_top = power ? power_top + kPowerH + 6 : power_top;
  const int height = axis_top + 30;
  std::string head = fmt::format("run {}: {}, {} ({} busy{}{})", side, t.what, Duration(t.length_ns),
                                 FormatPct(t.length_ns > 0 ? 100.0 * t.busy_ns / t.length_ns : 0),
                                 r.energy_measured ? ", " + FormatJoules(t.joules) : "",
                                 t.items_left_out ? fmt::format("; {} later items not drawn", t.items_left_out) : "");
  std::string out = fmt::format(
      "<svg class=\"side-{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">"
      "<title>run {}: one iteration on the timeline</title><text class=\"head\" x=\"6\" y=\"18\">{}</text>",
      side, kWidth, height, kWidth, height, side, EscapeHtml(head));
  for (int l = 0; l < lanes; ++l)
    out += fmt::format("<text class=\"lane\" x=\"6\" y=\"{}\">{}</text>", lanes_top + l * kLaneH + 12,
                       EscapeHtml(Shorten(t.lanes[l], 22)));
  if (!t.syncs.empty())
    out += fmt::format("<text class=\"lane\" x=\"6\" y=\"{}\">host waits (sync)</text>", sync_top + 12);
  for (const auto& s : t.syncs) {
    double x0 = px(s.start_ns), w = std::max(1.0, px(s.end_ns) - x0);
    out += fmt::format(
        "<g><title>{}: the host waits for the device, {}</title><rect class=\"sync\" x=\"{:.1f}\" y=\"{}\" "
        "width=\"{:.1f}\" height=\"{}\"/><path class=\"sync-mark\" d=\"M{:.1f} {}l-4 -7h8z\"/></g>",
        EscapeHtml(s.name), Duration(s.end_ns - s.start_ns), x0, sync_top + 2, w, kItemH, x0, sync_top + 9);
  }
  for (const auto& it : t.items) {
    double x0 = px(it.start_ns), w = std::max(0.6, px(it.end_ns) - x0);
    std::string finding = it.finding >= 0 ? fmt::format(" data-finding=\"{}\"", it.finding) : "";
    std::string region = it.region >= 0 ? fmt::format(" data-region=\"{}\"", r.regions[it.region].region) : "";
    std::string where = it.region >= 0 ? fmt::format("region {}", r.regions[it.region].region) : "in no region";
    if (it.finding >= 0 && r.findings[it.finding].rank > 0)
      where += fmt::format(", finding #{}", r.findings[it.finding].rank);
    out += fmt::format(
        "<rect class=\"item\"{}{} x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\"><title>{}{}, {}; "
        "{}</title></rect>",
        finding, region, x0, lanes_top + it.lane * kLaneH + 2, w, kItemH, Color(r, it),
        EscapeHtml(Shorten(it.name, 160)), it.op.empty() ? "" : " (" + EscapeHtml(it.op) + ")",
        Duration(it.end_ns - it.start_ns), where);
  }
  // Busy and idle: the strip is busy where no idle stretch is drawn over it.
  out += fmt::format(
      "<text class=\"lane\" x=\"6\" y=\"{}\">{}</text><rect class=\"busy\" x=\"{}\" y=\"{}\" width=\"{:.1f}\" "
      "height=\"{}\"/>",
      idle_top + 12, t.on_device ? "device idle" : "host outside ops", kLeft, idle_top + 2,
      px(t.length_ns) - kLeft, kItemH);
  for (auto [from, to] : t.idle)
    out += fmt::format(
        "<rect class=\"idle\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\"><title>idle {}</title></rect>",
        px(from), idle_top + 2, std::max(0.6, px(to) - px(from)), kItemH, Duration(to - from));
  if (power) {
    const double top = watts_top;
    auto py = [&](double w) { return power_top + kPowerH - w / top * kPowerH; };
    std::string points;
    for (size_t i = 0; i < t.power_w.size(); ++i)
      points += fmt::format("{:.1f},{:.1f} {:.1f},{:.1f} ", px(t.power_t_ns[i]), py(t.power_w[i]),
                            px(t.power_t_ns[i + 1]), py(t.power_w[i]));
    out += fmt::format(
        "<text class=\"lane\" x=\"6\" y=\"{}\">power (W)</text><line class=\"grid\" x1=\"{}\" x2=\"{:.1f}\" "
        "y1=\"{:.1f}\" y2=\"{:.1f}\"/><text class=\"tick\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>"
        "<text class=\"tick\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">0</text>"
        "<polyline class=\"power\" stroke=\"{}\" points=\"{}\"><title>power of the devices that ran the "
        "iteration, from the energy curve the attribution used</title></polyline>",
        power_top + kPowerH / 2, kLeft, px(t.length_ns), py(top), py(top), kLeft - 4, py(top) + 4,
        TickLabel(top), kLeft - 4, py(0) + 4, kPower[side == 'a' ? 0 : 1], points);
  }
  double ms = scale_ns * 1e-6, tick = TickStep(ms, 8);
  for (double x = 0; x <= ms * (1 + 1e-9); x += tick)
    out += fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                       px(static_cast<int64_t>(x * 1e6)), axis_top + 12, TickLabel(x));
  out += fmt::format(
      "<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">ms from the iteration's start</text>",
      kLeft + pw / 2, axis_top + 26);
  return out + "</svg>";
}

std::string Legend(const DiffReport& r) {
  std::set<int> shown;
  for (const auto* t : {&r.timelines.a, &r.timelines.b})
    for (const auto& it : t->items)
      if (it.finding >= 0 && r.findings[it.finding].verdict != Verdict::kNoise) shown.insert(it.finding);
  std::string out = "<div class=\"legend\">";
  for (int f : shown)
    out += fmt::format("<span data-finding=\"{}\"><i style=\"background:{}\"></i>#{} {}</span>", f,
                       FindingColor(r, f), r.findings[f].rank, EscapeHtml(Shorten(r.findings[f].label, 90)));
  out += fmt::format(
      "<span><i style=\"background:{}\"></i>matched, within noise</span><span><i style=\"background:{}\"></i>in no "
      "matched region</span><span><i style=\"background:{}\"></i>recorder's own work</span><span><i "
      "style=\"background:#7e57c2;opacity:.5\"></i>host waiting in a synchronizing call</span><span><i "
      "style=\"background:#fbe3e3\"></i>device idle</span>",
      kNoise, kNoRegion, kRecorder);
  return out + "</div>";
}

}  // namespace

std::string TimelineSection(const DiffReport& r) {
  const IterationTimeline& a = r.timelines.a;
  const IterationTimeline& b = r.timelines.b;
  if (!a.available && !b.available) return "";
  int64_t scale = std::max<int64_t>({1, a.available ? a.length_ns : 0, b.available ? b.length_ns : 0});
  double watts = 0;
  for (const auto* t : {&a, &b})
    for (double w : t->power_w) watts = std::max(watts, w);
  const double watts_step = TickStep(watts, 2);
  const double watts_top = std::max(watts_step, std::ceil(watts / watts_step) * watts_step);
  std::string out =
      "<section id=\"timeline\" class=\"timeline\"><h2>One iteration on the timeline</h2><p class=\"muted\">Each "
      "side's device work in one iteration, on one time scale, coloured by the finding whose region holds it. "
      "Click a finding (in the legend or below) to pick out its regions; click again to clear.</p>";
  out += Legend(r);
  for (auto [t, side] : {std::pair{&a, 'a'}, std::pair{&b, 'b'}}) {
    if (t->available)
      out += SideSvg(r, *t, side, scale, watts_top);
    else
      out += fmt::format("<p class=\"muted\" id=\"timeline-{}-missing\">Run {}: nothing to lay out (no device work "
                         "and no operators).</p>",
                         side, side);
  }
  return out + "</section>";
}

}  // namespace magneton::report
