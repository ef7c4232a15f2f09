#include "analysis/diff/root_cause.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <utility>

#include "analysis/diff/arguments.h"
#include "analysis/diff/call_site.h"
#include "analysis/diff/dtype_origin.h"
#include "analysis/diff/paired_ops.h"
#include "analysis/diff/recompute.h"
#include "analysis/diff/verdict.h"

namespace magneton::analysis {
namespace {

// Differing keys named as candidates when no rule names one (CandidateKeys).
constexpr size_t kMaxCandidateKeys = 8;

// Every op of the region: the top-level ops and everything nested in them.
std::vector<int64_t> AllOps(const RegionSide& s) {
  return s.cost->index().Subtrees(*s.ops);
}

// Every op of the regions of the side's finding group (of its region alone without one).
std::vector<int64_t> GroupOps(const RegionSide& s) {
  return s.cost->index().Subtrees(s.group ? *s.group : *s.ops);
}

// Sorted by time spent, then name, so the heaviest differences come first.
std::vector<NamedCount> Sorted(std::map<std::string, NamedCount> by_name) {
  std::vector<NamedCount> out;
  for (auto& [name, nc] : by_name) out.push_back(std::move(nc));
  std::stable_sort(out.begin(), out.end(),
                   [](const NamedCount& x, const NamedCount& y) { return x.seconds > y.seconds; });
  return out;
}

std::vector<NamedCount> CountOps(const RegionSide& s, const std::vector<int64_t>& ops) {
  std::map<std::string, NamedCount> by_name;
  for (auto id : ops) {
    const Op& op = s.run->ops[id];
    auto& nc = by_name[op.name];
    if (nc.count++ == 0) {
      nc.name = op.name;
      nc.call_site = UserCallSite(*s.run, op.stack);
    }
    nc.seconds += s.cost->Seconds(id);
  }
  return Sorted(std::move(by_name));
}

// Where the i-th kernel a region side launched was launched from: its own
// launch stack (native frames, `record --stacks`) where its run has one, else
// the call path of the recorded op that launched it. A measured pass's kernels
// have neither stack nor op; the recording pass's op stands for both passes.
struct LaunchPath {
  const Run* run = nullptr;
  int64_t stack = kNone;
};

LaunchPath PathOf(const RegionSide& s, const CostModel::Launched& l, size_t i) {
  const Kernel& k = *l.kernels[i];
  if (k.stack >= 0 && k.stack < static_cast<int64_t>(l.run->stacks.size())) return {l.run, k.stack};
  const int64_t op = l.ops[i];
  if (op >= 0 && op < static_cast<int64_t>(s.run->ops.size())) return {s.run, s.run->ops[op].stack};
  return {l.run, kNone};
}

std::vector<NamedCount> CountKernels(const RegionSide& s, const CostModel::Launched& l) {
  std::map<std::string, NamedCount> by_name;
  for (size_t i = 0; i < l.kernels.size(); ++i) {
    const Kernel* k = l.kernels[i];
    auto& nc = by_name[k->name];
    if (nc.count++ == 0) {
      nc.name = k->name;
      LaunchPath p = PathOf(s, l, i);
      nc.call_site = UserCallSite(*p.run, p.stack);
    }
    nc.seconds += (k->end_ns - k->start_ns) * 1e-9;
  }
  return Sorted(std::move(by_name));
}

// What x has more of than y (counts and time scaled to the surplus).
std::vector<NamedCount> Surplus(const std::vector<NamedCount>& x, const std::vector<NamedCount>& y) {
  std::map<std::string, int64_t> ycount;
  for (const auto& nc : y) ycount[nc.name] = nc.count;
  std::vector<NamedCount> out;
  for (const auto& nc : x) {
    int64_t extra = nc.count - ycount[nc.name];
    if (extra <= 0) continue;
    NamedCount e = nc;
    e.seconds = nc.seconds * static_cast<double>(extra) / static_cast<double>(nc.count);
    e.count = extra;
    out.push_back(std::move(e));
  }
  return out;
}

std::string Truncate(const std::string& s, size_t n = 60) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

std::string Names(const std::vector<NamedCount>& v, size_t limit = 3) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < v.size() && i < limit; ++i)
    parts.push_back(v[i].count > 1 ? fmt::format("{} x{}", Truncate(v[i].name), v[i].count)
                                   : Truncate(v[i].name));
  if (v.size() > limit) parts.push_back(fmt::format("{} more", v.size() - limit));
  return parts.empty() ? "nothing extra" : fmt::format("{}", fmt::join(parts, " + "));
}

std::string Dims(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ",")); }

bool IsContiguous(const Tensor& t) {
  if (t.strides.empty()) return true;  // strides not recorded: nothing to say
  int64_t expected = 1;
  for (size_t i = t.shape.size(); i-- > 0;) {
    if (t.shape[i] != 1 && i < t.strides.size() && t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

std::vector<ParamDelta> LayoutDeltas(const RegionSide& a, const std::vector<int64_t>& wa, const RegionSide& b,
                                     const std::vector<int64_t>& wb) {
  std::vector<ParamDelta> out;
  ForEachPairedInput(a, wa, b, wb, [&](const std::string& op, size_t i, const Tensor& x, const Tensor& y) {
    std::string subject = fmt::format("{} input {}", op, i);
    AddDelta(out, subject, "dtype", x.dtype, y.dtype);
    AddDelta(out, subject, "shape", Dims(x.shape), Dims(y.shape));
    if (!x.strides.empty() && !y.strides.empty()) {
      AddDelta(out, subject, "strides", Dims(x.strides), Dims(y.strides));
      AddDelta(out, subject, "contiguous", IsContiguous(x) ? "yes" : "no", IsContiguous(y) ? "yes" : "no");
    }
  });
  return out;
}

std::string Triple(const int32_t v[3]) { return fmt::format("({},{},{})", v[0], v[1], v[2]); }

std::vector<ParamDelta> LaunchDeltas(const std::vector<const Kernel*>& ka,
                                     const std::vector<const Kernel*>& kb) {
  std::vector<ParamDelta> out;
  for (auto [x, y] : PairByName(ka, kb, [](const Kernel* k) { return k->name; })) {
    std::string subject = "kernel " + Truncate(x->name);
    AddDelta(out, subject, "grid", Triple(x->grid), Triple(y->grid));
    AddDelta(out, subject, "block", Triple(x->block), Triple(y->block));
    AddDelta(out, subject, "registers", std::to_string(x->registers), std::to_string(y->registers));
    AddDelta(out, subject, "static_smem", std::to_string(x->static_smem), std::to_string(y->static_smem));
    AddDelta(out, subject, "dynamic_smem", std::to_string(x->dynamic_smem), std::to_string(y->dynamic_smem));
  }
  return out;
}

// The same operators given more elements on the costly side, for outputs that
// match: work whose results the region does not keep (an LM head over every
// prompt position when only the last one is used). This explains different
// kernels better than any configuration key, so it comes before them.
std::optional<Evidence> MoreWork(const RegionSide& a, const std::vector<int64_t>& wa, const RegionSide& b,
                                 const std::vector<int64_t>& wb, char costly) {
  char lean = costly == 'a' ? 'b' : 'a';
  std::optional<Evidence> e;
  // The summary names the largest ratio, preferring inputs that differ in one
  // dimension only (more positions of a sequence, more rows): inputs paired
  // by order across other operators can differ in every dimension.
  std::pair<bool, double> worst{false, 1};
  ForEachPairedInput(a, wa, b, wb, [&](const std::string& op, size_t i, const Tensor& ta, const Tensor& tb) {
    const Tensor& hi = costly == 'a' ? ta : tb;
    const Tensor& lo = costly == 'a' ? tb : ta;
    int64_t nh = hi.numel(), nl = lo.numel();
    if (hi.shape.empty() || lo.shape.empty() || nl <= 0 || nh <= nl) return;
    if (!e) e.emplace().kind = EvidenceClass::kLaunch;
    std::string subject = fmt::format("{} input {}", op, i);
    AddDelta(e->params, subject, "shape", Dims(ta.shape), Dims(tb.shape));
    AddDelta(e->params, subject, "elements", std::to_string(ta.numel()), std::to_string(tb.numel()));
    const bool one_dim = hi.shape.size() == lo.shape.size() &&
                         std::inner_product(hi.shape.begin(), hi.shape.end(), lo.shape.begin(), 0, std::plus<>(),
                                            std::not_equal_to<>()) == 1;
    const std::pair<bool, double> here{one_dim, static_cast<double>(nh) / static_cast<double>(nl)};
    if (here <= worst) return;
    worst = here;
    const double ratio = here.second;
    e->summary = fmt::format(
        "same operators on more data: {} input {} is {} on {} against {} on {} ({:.3g}x the elements) for "
        "outputs that match: work whose results the region does not keep",
        op, i, Dims(hi.shape), costly, Dims(lo.shape), lean, ratio);
  });
  return e;
}

// The first op on a side whose name the other side lacks (else its first op).
int64_t FirstDiffering(const std::vector<int64_t>& ops, const Run& run, const std::vector<NamedCount>& only) {
  for (auto id : ops)
    for (const auto& nc : only)
      if (run.ops[id].name == nc.name) return id;
  return ops.empty() ? kNone : ops.front();
}

// The costliest kernel on a side whose name the other side lacks (else its
// first): its index, -1 when the side launched none.
int64_t CostliestDiffering(const std::vector<const Kernel*>& ks, const std::vector<NamedCount>& only) {
  int64_t best = -1;
  auto ns = [&](int64_t i) { return ks[i]->end_ns - ks[i]->start_ns; };
  for (size_t i = 0; i < ks.size(); ++i)
    for (const auto& nc : only)
      if (ks[i]->name == nc.name && (best < 0 || ns(static_cast<int64_t>(i)) > ns(best))) best = static_cast<int64_t>(i);
  return best >= 0 ? best : (ks.empty() ? -1 : 0);
}

// The same operators on the same input layouts launched different kernels (or
// the same kernels differently): nothing in the code or the data tells the
// sides apart, so whatever configuration differs can have steered the choice.
// Keys of the region's frameworks first (torch.*, jax.*), then environment
// variables, then the rest (library versions, devices), at most a few.
std::vector<ConfigDelta> CandidateKeys(const std::vector<ConfigDelta>& config, const RegionSide& a,
                                       const RegionSide& b) {
  std::set<std::string> frameworks;
  for (const RegionSide* s : {&a, &b})
    for (auto op : *s->ops)
      if (op >= 0 && op < static_cast<int64_t>(s->run->ops.size())) frameworks.insert(s->run->ops[op].framework + ".");
  auto tier = [&](const std::string& key) {
    for (const auto& ns : frameworks)
      if (key.rfind(ns, 0) == 0) return 0;
    return key.rfind("env.", 0) == 0 ? 1 : 2;
  };
  std::vector<ConfigDelta> out = config;
  std::stable_sort(out.begin(), out.end(),
                   [&](const ConfigDelta& x, const ConfigDelta& y) { return tier(x.key) < tier(y.key); });
  if (out.size() > kMaxCandidateKeys) out.resize(kMaxCandidateKeys);
  for (auto& d : out) d.by_rule = false;
  return out;
}

// Evidence whose differences no code path or layout explains: different kernels
// for the same operators on the same inputs, only kernel launch parameters
// differing, or the same operators computing in another dtype (a default
// dtype, x64 or autocast switch). (Different operators explain different kernels.)
bool OnlyConfigCanExplain(const Evidence& e, const RootCause& rc) {
  if (rc.evidence.front().kind == EvidenceClass::kOperators) return false;
  if (std::any_of(rc.evidence.begin(), rc.evidence.end(),
                  [](const Evidence& x) { return x.kind == EvidenceClass::kArguments; }))
    return false;
  if (e.kind == EvidenceClass::kKernels) return e.params.empty();
  return e.kind == EvidenceClass::kLaunch &&
         std::all_of(e.params.begin(), e.params.end(), [](const ParamDelta& p) {
           return p.subject.rfind("kernel ", 0) == 0 || p.parameter == "dtype";
         });
}

Evidence ArgumentsEvidence(std::vector<ParamDelta> deltas, std::vector<NamedCount> all_a,
                           std::vector<NamedCount> all_b) {
  Evidence e;
  e.kind = EvidenceClass::kArguments;
  e.summary = "same operators, called differently: " + ArgumentSummary(deltas);
  e.params = std::move(deltas);
  e.all_a = std::move(all_a);
  e.all_b = std::move(all_b);
  return e;
}

std::vector<std::string> NamesOf(const std::vector<NamedCount>& v) {
  std::vector<std::string> out;
  for (const auto& nc : v) out.push_back(nc.name);
  return out;
}

// Operators that run again what their side computed before in the step
// (recompute.h), where they are most of the costlier side's extra time: named
// as such, with the count of each side beside them for the rules
// (rules/operators.json). A few repeated values among other extra operators
// (autograd's two equal products for x * x) are not what costs.
void AddRecomputed(Evidence& e, const RegionSide& a, const std::vector<int64_t>& wa, const RegionSide& b,
                   const std::vector<int64_t>& wb, char costly) {
  const Recomputed ra = FindRecomputed(a, wa, NamesOf(e.only_a)), rb = FindRecomputed(b, wb, NamesOf(e.only_b));
  const Recomputed& r = costly == 'a' ? ra : rb;
  const Run& run = *(costly == 'a' ? a : b).run;
  double extra = 0;
  for (const auto& nc : costly == 'a' ? e.only_a : e.only_b) extra += nc.seconds;
  if (r.ops == 0 || r.seconds < 0.5 * extra) return;
  const Op& first = run.ops[r.first];
  e.summary += fmt::format("; {} computes {} value{} a second time (first {} at {}, computed before at {})", costly,
                           r.ops, r.ops == 1 ? "" : "s", first.name, Describe(UserCallSite(run, first.stack)),
                           Describe(UserCallSite(run, run.ops[r.original].stack)));
  e.params.push_back({"operators", "recomputed values", std::to_string(ra.ops), std::to_string(rb.ops)});
}

}  // namespace

bool IsMetadataOp(const std::string& name) {
  static const std::set<std::string> kMetadata = {"aten::view",
                                                  "aten::_unsafe_view",
                                                  "aten::reshape",
                                                  "aten::_reshape_alias",
                                                  "aten::t",
                                                  "aten::transpose",
                                                  "aten::permute",
                                                  "aten::expand",
                                                  "aten::expand_as",
                                                  "aten::as_strided",
                                                  "aten::unsqueeze",
                                                  "aten::squeeze",
                                                  "aten::slice",
                                                  "aten::select",
                                                  "aten::narrow",
                                                  "aten::split",
                                                  "aten::split_with_sizes",
                                                  "aten::chunk",
                                                  "aten::unbind",
                                                  "aten::detach",
                                                  "aten::alias",
                                                  "aten::numpy_T",
                                                  "aten::lift_fresh",
                                                  "aten::resolve_conj",
                                                  "aten::resolve_neg",
                                                  "aten::contiguous",
                                                  "aten::to",
                                                  "aten::flatten",
                                                  "aten::unflatten",
                                                  "aten::view_as",
                                                  "aten::empty",
                                                  "aten::empty_like",
                                                  "aten::empty_strided",
                                                  "aten::size",
                                                  "aten::stride",
                                                  "aten::is_nonzero",
                                                  "aten::item",
                                                  "aten::_local_scalar_dense",
                                                  "detach"};
  return kMetadata.count(name) > 0;
}

bool IsWrapperOp(const std::string& name) {
  static const std::set<std::string> kWrappers = {"aten::linear",
                                                  "aten::matmul",
                                                  "aten::einsum",
                                                  "aten::dropout",
                                                  "aten::feature_dropout",
                                                  "aten::layer_norm",
                                                  "aten::group_norm",
                                                  "aten::batch_norm",
                                                  "aten::_batch_norm_impl_index",
                                                  "aten::instance_norm",
                                                  "aten::conv1d",
                                                  "aten::conv2d",
                                                  "aten::conv3d",
                                                  "aten::convolution",
                                                  "aten::_convolution",
                                                  "aten::conv_transpose1d",
                                                  "aten::conv_transpose2d",
                                                  "aten::conv_transpose3d",
                                                  "aten::scaled_dot_product_attention",
                                                  "aten::softmax",
                                                  "aten::log_softmax",
                                                  "aten::cross_entropy_loss",
                                                  "aten::nll_loss",
                                                  "aten::nll_loss_nd",
                                                  "aten::embedding",
                                                  "aten::clone",
                                                  "aten::_to_copy",
                                                  "aten::type_as",
                                                  "aten::masked_fill",
                                                  "aten::pad",
                                                  "aten::max_pool2d",
                                                  "aten::adaptive_avg_pool2d",
                                                  "aten::rms_norm",
                                                  "aten::_has_compatible_shallow_copy_type"};
  return kWrappers.count(name) > 0;
}

std::vector<int64_t> ComputeOps(const RegionSide& s) {
  std::vector<int64_t> out;
  for (auto id : AllOps(s)) {
    const std::string& name = s.run->ops[id].name;
    if (IsMetadataOp(name)) continue;
    if (IsWrapperOp(name)) {
      auto sub = s.cost->index().Subtree(id);
      bool delegates = std::any_of(sub.begin(), sub.end(),
                                   [&](int64_t o) { return o != id && !IsMetadataOp(s.run->ops[o].name); });
      if (delegates) continue;  // its children are counted instead
    }
    out.push_back(id);
  }
  return out;
}

namespace {

// A difference in the program's own code before a region's operators is
// evidence when it is at least this share of the costlier side's iteration.
constexpr double kMinHostCodeShare = 0.01;

// Same kernels with the same launch parameters: whether the costlier side's device
// waits for them longer, enough to explain most of the time it spends more
// (on a CPU run: the program's own code before the operators).
std::optional<Evidence> WaitDelta(const RegionSide& a, const RegionSide& b, char costly) {
  SideCost ca = a.cost->Cost(*a.ops), cb = b.cost->Cost(*b.ops);
  const SideCost& hi = costly == 'a' ? ca : cb;
  const SideCost& lo = costly == 'a' ? cb : ca;
  const double more_wait = hi.wait_seconds - lo.wait_seconds, more_time = hi.seconds - lo.seconds;
  if (more_wait <= 0 || more_time <= 0 || more_wait < 0.5 * more_time) return std::nullopt;
  const char lean = costly == 'a' ? 'b' : 'a';
  Evidence e;
  e.kind = EvidenceClass::kTimeline;
  if (!a.cost->has_kernels()) {  // the host's timeline: its waits are the program's own code
    // Python's own jitter is no cause: the extra must hold over the repetitions
    // and be a visible part of the step, not microseconds before a small region.
    const double step_s = (costly == 'a' ? a : b).cost->timeline().seconds();
    if (!Separated(hi.waits, lo.waits) || more_wait < kMinHostCodeShare * step_s) return std::nullopt;
    // Nor is a host slower throughout (another process, clocks): the code
    // before the operators must have grown more than the operators did, by at
    // least half of its extra time (an A/A pair on a loaded CPU: every region
    // and the code before it 1.45x slower on one side).
    const double ops_hi = hi.seconds - hi.wait_seconds, ops_lo = lo.seconds - lo.wait_seconds;
    const double slower = ops_lo > 0 && ops_hi > ops_lo ? ops_hi / ops_lo : 1.0;
    if (hi.wait_seconds - lo.wait_seconds * slower < 0.5 * more_wait) return std::nullopt;
    e.summary = fmt::format(
        "same operators, called the same way, but the program's own code before them takes {} on {} and {} on "
        "{}: host work between the operators (Python, data handling, waiting on something outside the framework)",
        Duration(hi.wait_seconds), costly, Duration(lo.wait_seconds), lean);
    e.params = TimelineParams({}, {}, costly, kCauseHostCode);
    return e;
  }
  e.summary = fmt::format(
      "same kernels with the same launch parameters, but the device waits {} for them on {} and {} on {}: the host "
      "launches them later (a launch-bound stretch, or a synchronization before them)",
      Duration(hi.wait_seconds), costly, Duration(lo.wait_seconds), lean);
  // The calls that made the host wait there, where a measured pass has them
  // (runs of kernels alone name theirs in evidence of their own, kernel_regions.h).
  const auto ops_a = GroupOps(a), ops_b = GroupOps(b);
  auto sa = a.cost->syncs().Before(ops_a), sb = b.cost->syncs().Before(ops_b);
  const bool kernels_only = !a.ops->empty() && a.run->ops[a.ops->front()].framework == "kernels";
  const bool more_calls = !kernels_only && Total(costly == 'a' ? sa : sb) - Total(costly == 'a' ? sb : sa) >= 0.5;
  const double blocked_a = a.cost->syncs().BlockedBefore(ops_a), blocked_b = b.cost->syncs().BlockedBefore(ops_b);
  const double more_blocked = costly == 'a' ? blocked_a - blocked_b : blocked_b - blocked_a;
  const bool synced = more_calls && SyncsExplainWait(more_blocked, more_wait);
  // Or a call earlier in the step that the host blocked in still delays these ops (WaitsAfterSyncs).
  auto after_a = a.cost->syncs().After(ops_a), after_b = b.cost->syncs().After(ops_b);
  const bool after = !synced && !kernels_only &&
                     Total(costly == 'a' ? after_a : after_b) - Total(costly == 'a' ? after_b : after_a) >= 0.5;
  // A host slower throughout (machine load, clocks) waits longer everywhere: no cause here.
  if (!synced && !after && !kernels_only && (costly == 'a' ? a : b).cost->host_slower_throughout()) return std::nullopt;
  // Nor is a late launch without a synchronization of its own when it is the
  // host's jitter: it must hold over the repetitions and be a visible part of
  // the step (an A/A pair of a ResNet step: 0.1-1% of the step here and there,
  // one process's host a little slower where the device catches up with it).
  if (!synced && !after && !kernels_only &&
      (!Separated(hi.waits, lo.waits) ||
       more_wait < kMinHostCodeShare * (costly == 'a' ? a : b).cost->timeline().seconds()))
    return std::nullopt;
  if (synced)
    e.summary += fmt::format("; synchronizing calls before them, per iteration: a {}, b {}", SyncPhrase(sa), SyncPhrase(sb));
  else if (after)
    e.summary += fmt::format(
        "; the host blocked at a synchronizing call earlier in the step, and without it would have launched them "
        "that much earlier, per iteration: a {}, b {}",
        SyncPhrase(after_a), SyncPhrase(after_b));
  else if (more_calls)
    e.summary += fmt::format(
        "; synchronizing calls before them, per iteration: a {}, b {}, but {}'s host blocked in them only {} per "
        "iteration: the device had drained before the calls, and waits for the host's launches",
        SyncPhrase(sa), SyncPhrase(sb), costly, Duration(std::max(0.0, more_blocked)));
  // Runs of kernels alone: the cause is told once their synchronizing calls are
  // compared (kernel_regions.h, ExplainKernelFindings).
  if (after)
    e.params = TimelineParams(after_a, after_b, costly, kCauseSyncs);
  else if (!kernels_only)
    e.params = TimelineParams(sa, sb, costly, synced ? kCauseSyncs : kCauseLateLaunch);
  return e;
}

// Whether the evidence is operators or kernels that only the lean side runs.
bool NothingOfItsOwn(const std::vector<Evidence>& evidence, char costly) {
  bool differs = false;
  for (const auto& e : evidence) {
    if (e.kind != EvidenceClass::kOperators && e.kind != EvidenceClass::kKernels) continue;
    if (!(costly == 'a' ? e.only_a : e.only_b).empty()) return false;
    differs = true;
  }
  return differs;
}

}  // namespace

bool SameOperatorsAndLayouts(const RegionSide& a, const RegionSide& b) {
  auto wa = ComputeOps(a), wb = ComputeOps(b);
  auto names = [](const RegionSide& s, const std::vector<int64_t>& ops) {
    std::vector<std::string> out;
    for (auto id : ops) out.push_back(s.run->ops[id].name);
    std::sort(out.begin(), out.end());
    return out;
  };
  return names(a, wa) == names(b, wb) && LayoutDeltas(a, wa, b, wb).empty() && ArgumentDeltas(a, wa, b, wb).empty();
}

RootCause FindRootCause(const RegionSide& a, const RegionSide& b, char costly,
                        const std::vector<ConfigDelta>& config, const std::vector<Rule>& rules) {
  RootCause rc;
  auto wa = ComputeOps(a), wb = ComputeOps(b);
  auto ops_a = CountOps(a, wa), ops_b = CountOps(b, wb);
  auto launched_a = a.cost->KernelsOf(AllOps(a)), launched_b = b.cost->KernelsOf(AllOps(b));
  const auto& ka = launched_a.kernels;
  const auto& kb = launched_b.kernels;
  auto kn_a = CountKernels(a, launched_a), kn_b = CountKernels(b, launched_b);

  auto only_ops_a = Surplus(ops_a, ops_b), only_ops_b = Surplus(ops_b, ops_a);
  auto arg_deltas = ArgumentDeltas(a, wa, b, wb);
  auto only_k_a = Surplus(kn_a, kn_b), only_k_b = Surplus(kn_b, kn_a);
  // What the rules see: every op, and what each side has that the other lacks.
  RuleSubject subject;
  subject.costly = costly;
  subject.ops = NamesOf(ops_a);
  for (auto& n : NamesOf(ops_b)) subject.ops.push_back(std::move(n));
  subject.costly_ops = NamesOf(costly == 'a' ? only_ops_a : only_ops_b);
  subject.lean_ops = NamesOf(costly == 'a' ? only_ops_b : only_ops_a);
  subject.costly_kernels = NamesOf(costly == 'a' ? only_k_a : only_k_b);
  subject.lean_kernels = NamesOf(costly == 'a' ? only_k_b : only_k_a);
  subject.config = config;

  if (!only_ops_a.empty() || !only_ops_b.empty()) {
    Evidence e;
    e.kind = EvidenceClass::kOperators;
    e.summary =
        fmt::format("different operators: a runs {}, b runs {}", Names(only_ops_a), Names(only_ops_b));
    e.only_a = std::move(only_ops_a);
    e.only_b = std::move(only_ops_b);
    e.all_a = ops_a;
    e.all_b = ops_b;
    int64_t oa = FirstDiffering(wa, *a.run, e.only_a), ob = FirstDiffering(wb, *b.run, e.only_b);
    if (oa >= 0 && ob >= 0)
      e.divergence = FirstDivergence(*a.run, a.run->ops[oa].stack, *b.run, b.run->ops[ob].stack);
    AddRecomputed(e, a, wa, b, wb, costly);
    rc.evidence.push_back(std::move(e));
  }

  if (rc.evidence.empty())
    if (auto more = MoreWork(a, wa, b, wb, costly)) rc.evidence.push_back(std::move(*more));

  if (!only_k_a.empty() || !only_k_b.empty()) {
    Evidence e;
    e.kind = EvidenceClass::kKernels;
    // Regions of runs without operators are NVTX ranges (range_regions.h) or
    // places in an aligned kernel sequence (kernel_regions.h).
    const std::string framework = wa.empty() ? "" : a.run->ops[wa.front()].framework;
    const char* same = framework == "nvtx" ? "NVTX range" : framework == "kernels" ? "place in the step" : "operators";
    e.summary = rc.evidence.empty() || rc.evidence.front().kind == EvidenceClass::kLaunch
                    ? fmt::format("same {}, different kernels: a launches {}, b launches {}", same,
                                  Names(only_k_a), Names(only_k_b))
                    : fmt::format("different kernels: a launches {}, b launches {}", Names(only_k_a),
                                  Names(only_k_b));
    e.only_a = std::move(only_k_a);
    e.only_b = std::move(only_k_b);
    e.all_a = kn_a;
    e.all_b = kn_b;
    const int64_t xa = CostliestDiffering(ka, e.only_a), xb = CostliestDiffering(kb, e.only_b);
    if (xa >= 0 && xb >= 0) {
      LaunchPath pa = PathOf(a, launched_a, static_cast<size_t>(xa)), pb = PathOf(b, launched_b, static_cast<size_t>(xb));
      e.divergence = FirstDivergence(*pa.run, pa.stack, *pb.run, pb.stack);
    }
    e.params = LayoutDeltas(a, wa, b, wb);  // layouts steer kernel choice too
    rc.evidence.push_back(std::move(e));
  }

  if (rc.evidence.empty()) {
    // Same operators and kernels: what they were given, and how they were launched.
    auto params = LaunchDeltas(ka, kb);
    for (auto& d : LayoutDeltas(a, wa, b, wb))
      if (params.size() < kMaxParams) params.push_back(std::move(d));
    Evidence e;
    e.all_a = ka.empty() ? ops_a : kn_a;
    e.all_b = kb.empty() ? ops_b : kn_b;
    if (!params.empty()) {
      e.kind = EvidenceClass::kLaunch;
      const auto& d = params.front();
      e.summary =
          fmt::format("same {}, different launch parameters or input layouts: {} {} {} vs {}",
                      ka.empty() ? "operators" : "kernels", d.subject, d.parameter, d.value_a, d.value_b);
      if (d.parameter == "dtype")
        if (std::string origin = DtypeOrigin(costly == 'a' ? a : b, costly == 'a' ? d.value_a : d.value_b);
            !origin.empty())
          e.summary += fmt::format("; on {}, {}", costly, origin);
      e.params = std::move(params);
    } else if (!arg_deltas.empty()) {
      e = ArgumentsEvidence(std::exchange(arg_deltas, {}), e.all_a, e.all_b);
    } else if (auto waited = WaitDelta(a, b, costly)) {
      waited->all_a = std::move(e.all_a);
      waited->all_b = std::move(e.all_b);
      e = std::move(*waited);
    } else {
      e.kind = EvidenceClass::kNone;
      e.summary = ka.empty() && kb.empty()
                      ? "same operators and input layouts: nothing in the code path differs"
                      : "same operators, kernels and launch parameters: nothing in the code path "
                        "differs";
    }
    rc.evidence.push_back(std::move(e));
  }
  // A costlier side that runs nothing the other lacks does not cost more by its
  // work: where the device mostly waits for it there, the wait leads and the
  // other side's extra work backs it (a launch-bound step against a captured
  // CUDA graph that also launches a few kernels of its own at that place).
  // Where its operators take more data than the other side's (a decoding step
  // over the whole sequence against one with a cache), that is its cost.
  if (NothingOfItsOwn(rc.evidence, costly)) {
    if (auto more = MoreWork(a, wa, b, wb, costly))
      rc.evidence.insert(rc.evidence.begin(), std::move(*more));
    else if (auto waited = WaitDelta(a, b, costly))
      rc.evidence.insert(rc.evidence.begin(), std::move(*waited));
  }
  // What else the code passes differently backs whatever comes first.
  if (!arg_deltas.empty()) rc.evidence.push_back(ArgumentsEvidence(std::exchange(arg_deltas, {}), ops_a, ops_b));

  // Known patterns: recommendations, and the configuration keys that steer
  // the choice each piece of evidence shows.
  std::set<std::string> seen;
  for (auto& e : rc.evidence) {
    subject.evidence = e.kind;
    subject.SetParams(e.params);
    for (auto& m : MatchRules(rules, subject)) {
      for (auto& d : m.steering)
        if (std::none_of(e.config.begin(), e.config.end(),
                         [&](const ConfigDelta& x) { return x.key == d.key; }))
          e.config.push_back(d);
      if (seen.insert(m.hit.id).second) rc.rules.push_back(std::move(m.hit));
    }
    // No rule named a key: the keys that differ are still the only candidates.
    if (e.config.empty() && OnlyConfigCanExplain(e, rc)) e.config = CandidateKeys(config, a, b);
  }
  return rc;
}

}  // namespace magneton::analysis
