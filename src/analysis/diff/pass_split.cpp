#include "analysis/diff/pass_split.h"

#include <cstdlib>

#include "analysis/diff/row_select.h"

namespace magneton::analysis {

namespace {

// One pass: what started in [from, to); ops and their device work keep their links.
Run Pass(const Run& run, int64_t from, int64_t to) {
  Run p = run;
  auto in = [&](int64_t t) { return t >= from && t < to; };
  auto ops = Select(p.ops, [&](const Op& o) { return in(o.start_ns); });
  for (auto& o : p.ops) {
    o.parent = Mapped(ops, o.parent);
    o.forward_op = Mapped(ops, o.forward_op);
  }
  Select(p.kernels, [&](const Kernel& k) { return in(k.start_ns); });
  for (auto& k : p.kernels) k.op = Mapped(ops, k.op);
  Select(p.transfers, [&](const Transfer& t) { return in(t.start_ns); });
  for (auto& t : p.transfers) t.op = Mapped(ops, t.op);
  Select(p.api_calls, [&](const ApiCall& a) { return in(a.start_ns); });
  auto ranges = Select(p.ranges, [&](const Range& r) { return in(r.start_ns); });
  for (auto& r : p.ranges) r.parent = Mapped(ranges, r.parent);
  p.replays.clear();  // measured on the recorded ops; kept with the recording pass below
  p.info.start_ns = from;
  p.info.end_ns = to;
  return p;
}

}  // namespace

std::optional<SplitPasses> SplitAtMeasuredPass(const Run& run) {
  auto it = run.info.extra.find("measured_from_ns");
  if (it == run.info.extra.end()) return std::nullopt;
  char* end = nullptr;
  const long long at = std::strtoll(it->second.c_str(), &end, 10);
  if (!end || *end != '\0' || at <= run.info.start_ns) return std::nullopt;
  const int64_t stop = run.info.end_ns > at ? run.info.end_ns : INT64_MAX;
  // A recorder that lets the program run between its passes (the JAX route:
  // the program's own call of the recorded step, in flight when the measured
  // pass begins) notes where the recording pass ended; that stretch is neither.
  int64_t recorded_until = at;
  if (auto u = run.info.extra.find("recorded_until_ns"); u != run.info.extra.end()) {
    const long long until = std::strtoll(u->second.c_str(), &end, 10);
    if (end && *end == '\0' && until > run.info.start_ns && until <= at) recorded_until = until;
  }
  SplitPasses s{Pass(run, INT64_MIN, recorded_until), Pass(run, at, stop)};
  s.recorded.info.start_ns = run.info.start_ns;
  s.recorded.replays = run.replays;
  s.recorded.info.extra[kFingerprintsKey] = "true";
  s.measured.info.extra[kFingerprintsKey] = "false";
  s.measured.info.extra["pass"] = "measured";
  s.recorded.info.extra["pass"] = "recording";
  for (const char* key : {"measured_from_ns", "recorded_until_ns"}) {
    s.recorded.info.extra.erase(key);
    s.measured.info.extra.erase(key);
  }
  return s;
}

}  // namespace magneton::analysis
