#include "analysis/diff/step_timeline.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

namespace magneton::analysis {

namespace {

struct Span {
  int64_t start, end;
  int32_t device;
  int64_t correlation;
  Wait* wait;  // where the item's wait goes, or null
};

// Over StepTimeline::full_period windows.
template <class F>
double MeanOverPeriods(const std::vector<StepWindow>& steps, F value) {
  double sum = 0;
  size_t n = 0;
  for (const StepWindow& w : steps)
    if (w.counted) sum += value(w), ++n;
  return n ? sum / static_cast<double>(n) : 0;
}

// Marks the windows that hold items outside every repetition (`outside`:
// their start times) and leaves them out of the means where they are fewer
// than half of the full periods.
void MarkForeignWork(std::vector<int64_t> outside, StepTimeline& out) {
  std::sort(outside.begin(), outside.end());
  const size_t full = out.steps.size() > 1 ? out.steps.size() - 1 : out.steps.size();
  size_t with = 0;
  for (size_t i = 0; i < out.steps.size(); ++i) {
    StepWindow& w = out.steps[i];
    w.counted = out.steps.size() == 1 || i + 1 < out.steps.size();
    auto lo = std::lower_bound(outside.begin(), outside.end(), w.start_ns);
    auto hi = std::lower_bound(lo, outside.end(), w.end_ns);
    w.foreign = hi - lo;
    if (w.counted && w.foreign) ++with;
  }
  if (with == 0 || 2 * with >= full) return;
  for (StepWindow& w : out.steps)
    if (w.counted && w.foreign) {
      w.counted = false;
      ++out.foreign_windows;
      out.foreign_items += w.foreign;
    }
}

// Busy stretches of `spans` inside [from, to), merged; returns the idle gaps.
std::vector<std::pair<int64_t, int64_t>> IdleGaps(std::vector<Span> spans, int64_t from, int64_t to, int64_t* busy) {
  std::sort(spans.begin(), spans.end(), [](const Span& x, const Span& y) { return x.start < y.start; });
  std::vector<std::pair<int64_t, int64_t>> gaps;
  int64_t cursor = from;
  *busy = 0;
  for (const Span& s : spans) {
    int64_t a = std::max(s.start, cursor), b = std::min(s.end, to);
    if (s.start > cursor && cursor < to) gaps.emplace_back(cursor, std::min(s.start, to));
    if (b > a) {
      *busy += b - a;
      cursor = b;
    }
    if (cursor >= to) break;
  }
  if (cursor < to) gaps.emplace_back(cursor, to);
  return gaps;
}

// The one delay d with sum(min(gap, d)) = total over `gaps` (all of the
// largest gap when they hold less than total).
int64_t WaterLevel(std::vector<int64_t> gaps, int64_t total) {
  std::sort(gaps.begin(), gaps.end());
  int64_t level = 0;
  for (size_t i = 0; i < gaps.size(); ++i) {
    const auto open = static_cast<int64_t>(gaps.size() - i);  // gaps at least this long
    if ((gaps[i] - level) * open >= total) return level + (total + open - 1) / open;
    total -= (gaps[i] - level) * open;
    level = gaps[i];
  }
  return level;
}

// BuildStepTimeline's program_seconds: reps[w.rep] holds each window's items.
void TrimTracerDelay(StepTimeline& out, std::vector<std::vector<Span>>& reps, double program_seconds) {
  out.traced_seconds = out.seconds();
  int64_t excess = 0, counted = 0;
  for (const StepWindow& w : out.steps)
    if (w.counted) excess += w.end_ns - w.start_ns, ++counted;
  excess -= static_cast<int64_t>(std::llround(program_seconds * 1e9 * static_cast<double>(counted)));
  if (!out.on_device || counted == 0 || excess <= 0) return;
  auto each_gap = [&](StepWindow& w, auto&& f) {
    for (Span& s : reps[w.rep])
      if (s.wait && s.wait->ns > 0) f(s.wait->ns, s.wait->joules);
    if (w.tail_ns > 0) f(w.tail_ns, w.tail_j);
  };
  std::vector<int64_t> gaps;
  for (StepWindow& w : out.steps)
    if (w.counted) each_gap(w, [&](int64_t ns, double) { gaps.push_back(ns); });
  const int64_t d = WaterLevel(std::move(gaps), excess);
  out.tracer_delay_ns = d;
  double run_cut_j = 0;
  int64_t run_cut_ns = 0;
  for (StepWindow& w : out.steps) {
    double cut_j = 0;
    each_gap(w, [&](int64_t& ns, double& j) {
      const int64_t cut = std::min(ns, d);
      const double part = std::isnan(j) ? 0 : j * static_cast<double>(cut) / static_cast<double>(ns);
      ns -= cut, j -= part;
      w.trimmed_ns += cut, cut_j += part;
    });
    w.joules -= cut_j;
    if (!std::isnan(w.idle_j)) w.idle_j = std::max(0.0, w.idle_j - cut_j);  // unmeasured stays so
    run_cut_j += cut_j, run_cut_ns += w.trimmed_ns;
  }
  out.run_j -= run_cut_j;
  out.run_s -= static_cast<double>(run_cut_ns) * 1e-9;
}

}  // namespace

double StepTimeline::seconds() const {
  return MeanOverPeriods(steps, [](const StepWindow& w) { return w.length_ns() * 1e-9; });
}

double StepTimeline::host_seconds() const {
  if (!on_device) return seconds();
  double sum = 0;
  int64_t n = 0;
  bool launches = steps.size() >= 2;
  for (size_t i = 0; launches && i + 1 < steps.size(); ++i) {
    launches = steps[i].launch_ns >= 0 && steps[i + 1].launch_ns >= 0;
    if (launches && steps[i].counted) sum += (steps[i + 1].launch_ns - steps[i].launch_ns) * 1e-9, ++n;
  }
  if (launches) return n ? sum / static_cast<double>(n) : kUnmeasured;
  if (step_marks_ns.size() < 2) return kUnmeasured;
  std::vector<double> periods;
  for (size_t i = 0; i + 1 < step_marks_ns.size(); ++i) periods.push_back((step_marks_ns[i + 1] - step_marks_ns[i]) * 1e-9);
  if (foreign_windows == 0)
    return (step_marks_ns.back() - step_marks_ns.front()) * 1e-9 / static_cast<double>(periods.size());
  std::nth_element(periods.begin(), periods.begin() + periods.size() / 2, periods.end());
  return periods[periods.size() / 2];
}

double StepTimeline::busy_seconds() const {
  return MeanOverPeriods(steps, [](const StepWindow& w) { return w.busy_ns * 1e-9; });
}

double StepTimeline::joules() const {
  return MeanOverPeriods(steps, [](const StepWindow& w) { return w.joules; });
}

double StepTimeline::idle_joules() const {
  return MeanOverPeriods(steps, [](const StepWindow& w) { return w.idle_j; });
}

double StepTimeline::tail_joules() const {
  return MeanOverPeriods(steps, [](const StepWindow& w) { return w.tail_j; });
}

double StepTimeline::tail_seconds() const {
  return MeanOverPeriods(steps, [](const StepWindow& w) { return w.tail_ns * 1e-9; });
}

double StepTimeline::outside_joules() const {
  double in = 0;
  for (const auto& w : steps) in += w.joules;
  return run_j - in;
}

StepTimeline BuildStepTimeline(const Run& run, const energy::Attribution& energy, const PassAlignment& al,
                               double program_seconds) {
  StepTimeline out;
  std::vector<std::vector<Span>> reps(static_cast<size_t>(std::max<int64_t>(0, al.repeats)));
  std::vector<int64_t> outside;  // start times of the items outside every repetition
  auto add = [&](int32_t rep, const Span& s) {
    if (rep >= 0 && rep < static_cast<int32_t>(reps.size()) && s.end >= s.start) reps[rep].push_back(s);
    else if (rep < 0) outside.push_back(s.start);
  };
  out.kernel_wait.assign(run.kernels.size(), Wait{});
  out.transfer_wait.assign(run.transfers.size(), Wait{});
  for (size_t k = 0; k < run.kernels.size() && k < al.kernel_rep.size(); ++k) {
    const Kernel& x = run.kernels[k];
    add(al.kernel_rep[k], {x.start_ns, x.end_ns, x.device, x.correlation, &out.kernel_wait[k]});
    out.on_device = true;
  }
  for (size_t t = 0; t < run.transfers.size() && t < al.transfer_rep.size(); ++t) {
    const Transfer& x = run.transfers[t];
    if (x.kind == "sync") continue;
    add(al.transfer_rep[t], {x.start_ns, x.end_ns, x.device, x.correlation, &out.transfer_wait[t]});
  }
  if (!out.on_device) {  // a run without device work: its top-level operators
    out.op_wait.assign(run.ops.size(), Wait{});
    for (size_t o = 0; o < run.ops.size() && o < al.op_rep.size(); ++o)
      if (run.ops[o].parent == kNone)
        add(al.op_rep[o], {run.ops[o].start_ns, run.ops[o].end_ns, kHostDevice, 0, &out.op_wait[o]});
  }

  std::unordered_map<int64_t, int64_t> launch_of;  // correlation -> API call start
  for (const auto& a : run.api_calls) launch_of.try_emplace(a.correlation, a.start_ns);
  std::set<int32_t> devices;
  if (!out.on_device)
    for (const auto& d : energy.devices) devices.insert(d.device);

  for (size_t r = 0; r < reps.size(); ++r) {
    const auto& spans = reps[r];
    if (spans.empty()) continue;
    StepWindow w;
    w.rep = static_cast<int32_t>(r);
    w.start_ns = INT64_MAX;
    w.end_ns = INT64_MIN;
    int64_t first_corr = INT64_MAX;
    for (const Span& s : spans) {
      w.start_ns = std::min(w.start_ns, s.start);
      w.end_ns = std::max(w.end_ns, s.end);
      if (s.correlation > 0) first_corr = std::min(first_corr, s.correlation);
      if (out.on_device) devices.insert(s.device);
    }
    if (auto it = launch_of.find(first_corr); it != launch_of.end()) w.launch_ns = it->second;
    if (!out.on_device) w.launch_ns = w.start_ns;
    out.steps.push_back(w);
  }
  // A window runs to the next one's start: its idle tail is its own.
  for (size_t i = 0; i + 1 < out.steps.size(); ++i)
    out.steps[i].end_ns = std::max(out.steps[i].start_ns, out.steps[i + 1].start_ns);
  MarkForeignWork(std::move(outside), out);
  for (const Range& r : run.ranges)
    if (IsStepMark(r)) out.step_marks_ns.push_back(r.start_ns);
  std::sort(out.step_marks_ns.begin(), out.step_marks_ns.end());

  auto joules = [&](int64_t from, int64_t to) {
    double j = 0;
    for (int32_t d : devices) j += energy.Between(d, from, to);
    return devices.empty() || !energy.measured ? kUnmeasured : j;
  };
  size_t w_index = 0;
  for (size_t r = 0; r < reps.size(); ++r) {
    if (reps[r].empty()) continue;
    StepWindow& w = out.steps[w_index++];
    std::vector<Span> spans;  // the items overlapping the window: its own and its neighbours'
    for (size_t q = r > 0 ? r - 1 : 0; q <= r + 1 && q < reps.size(); ++q)
      for (const Span& s : reps[q])
        if (s.end > w.start_ns && s.start < w.end_ns) spans.push_back(s);
    auto gaps = IdleGaps(std::move(spans), w.start_ns, w.end_ns, &w.busy_ns);
    w.joules = joules(w.start_ns, w.end_ns);
    w.idle_j = 0;
    for (auto [a, b] : gaps) w.idle_j += joules(a, b);
    // Each item's wait: the idle stretch before it inside its repetition.
    std::vector<const Span*> own;
    for (const Span& s : reps[r]) own.push_back(&s);
    std::sort(own.begin(), own.end(), [](const Span* x, const Span* y) { return x->start < y->start; });
    int64_t cursor = w.start_ns;
    for (const Span* s : own) {
      if (s->start > cursor && s->wait) {
        s->wait->ns = s->start - cursor;
        s->wait->joules = joules(cursor, s->start);
      }
      cursor = std::max(cursor, s->end);
    }
    w.tail_ns = std::max<int64_t>(0, w.end_ns - cursor);
    w.tail_j = w.tail_ns > 0 ? joules(cursor, w.end_ns) : 0;
  }
  int64_t start = run.info.start_ns, end = run.info.end_ns;
  if (end <= start && !out.steps.empty()) start = out.steps.front().start_ns, end = out.steps.back().end_ns;
  out.run_s = (end - start) * 1e-9;
  out.run_j = joules(start, end);
  if (program_seconds > 0) TrimTracerDelay(out, reps, program_seconds);
  return out;
}

}  // namespace magneton::analysis
