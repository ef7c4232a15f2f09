#include "analysis/diff/fused_regions.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "analysis/diff/root_cause.h"

namespace magneton::analysis {
namespace {

// A side's ops of a region are fused away when they are XLA equations that do
// work and launched no kernel, on a run that recorded kernels at all. Eager
// frameworks launch their own kernels, so this applies to "jax" ops only.
bool FusedAway(const Run& run, const CostModel& cost, const std::vector<int64_t>& ops) {
  if (!cost.has_kernels() || ops.empty()) return false;
  RegionSide side{&run, &cost, &ops};
  auto compute = ComputeOps(side);
  if (compute.empty()) return false;
  for (auto id : compute)
    if (run.ops[id].framework != "jax") return false;
  return !cost.Launches(ops);
}

bool Has(const std::vector<int64_t>& v, int64_t t) { return std::find(v.begin(), v.end(), t) != v.end(); }

// Boundary tensors of the union: inputs not produced inside, outputs not consumed inside.
void MergeSide(std::vector<int64_t>& ops, std::vector<int64_t>& in, std::vector<int64_t>& out,
               const std::vector<int64_t>& ops2, const std::vector<int64_t>& in2, const std::vector<int64_t>& out2) {
  std::vector<int64_t> inputs, outputs;
  for (auto t : in)
    if (!Has(out2, t) && !Has(inputs, t)) inputs.push_back(t);
  for (auto t : in2)
    if (!Has(out, t) && !Has(inputs, t)) inputs.push_back(t);
  for (auto t : out)
    if (!Has(in2, t) && !Has(outputs, t)) outputs.push_back(t);
  for (auto t : out2)
    if (!Has(in, t) && !Has(outputs, t)) outputs.push_back(t);
  ops.insert(ops.end(), ops2.begin(), ops2.end());
  std::sort(ops.begin(), ops.end());
  in = std::move(inputs);
  out = std::move(outputs);
}

void Merge(RegionMatch& into, const RegionMatch& from) {
  MergeSide(into.ops_a, into.inputs_a, into.outputs_a, from.ops_a, from.inputs_a, from.outputs_a);
  MergeSide(into.ops_b, into.inputs_b, into.outputs_b, from.ops_b, from.inputs_b, from.outputs_b);
  into.output_rel_diff = std::max(into.output_rel_diff, from.output_rel_diff);
}

// The regions while merging: slots in their order, merged ones pointing at
// the region that took them in, and per slot whether each side is fused away
// and launches kernels. Side a's boundary tensors say which slots produce and
// consume each tensor (pairs share boundaries).
class Slots {
 public:
  Slots(const Run& a, const Run& b, const CostModel& ca, const CostModel& cb, std::vector<RegionMatch>& regions)
      : a_(a), b_(b), ca_(ca), cb_(cb), regions_(regions), n_(static_cast<int32_t>(regions.size())) {
    into_.resize(n_);
    fused_a_.resize(n_), fused_b_.resize(n_), launch_a_.resize(n_), launch_b_.resize(n_);
    for (int32_t s = 0; s < n_; ++s) {
      into_[s] = s;
      Assess(s);
      for (auto t : regions_[s].outputs_a) producers_[t].push_back(s);
      for (auto t : regions_[s].inputs_a) consumers_[t].push_back(s);
    }
  }
  int32_t size() const { return n_; }
  bool alive(int32_t s) const { return into_[s] == s; }
  bool fused(int32_t s) const { return fused_a_[s] || fused_b_[s]; }

  // The region (other than r) that produces one of r's inputs (producer) or
  // consumes one of its outputs: the first in order, as it stands now.
  int32_t Neighbour(int32_t r, bool producer) {
    int32_t best = -1;
    for (auto t : producer ? regions_[r].inputs_a : regions_[r].outputs_a) {
      auto& map = producer ? producers_ : consumers_;
      auto it = map.find(t);
      if (it == map.end()) continue;
      for (int32_t s : it->second) {
        s = Resolve(s);
        if (s != r && (best < 0 || s < best) &&
            Has(producer ? regions_[s].outputs_a : regions_[s].inputs_a, t))
          best = s;
      }
    }
    return best;
  }
  // The neighbour must have kernels where r has none, else merging explains nothing.
  bool DoesTheWork(int32_t r, int32_t m) const {
    return m >= 0 && (!fused_a_[r] || launch_a_[m]) && (!fused_b_[r] || launch_b_[m]);
  }
  // Merges r into m; returns the first slot whose neighbours or status the
  // merge may change (m, and the regions next to r or m).
  int32_t Merge(int32_t r, int32_t m) {
    int32_t first = m;
    for (int32_t x : {r, m}) {
      for (auto t : regions_[x].outputs_a)
        if (auto it = consumers_.find(t); it != consumers_.end())
          for (int32_t s : it->second) first = std::min(first, Resolve(s));
      for (auto t : regions_[x].inputs_a)
        if (auto it = producers_.find(t); it != producers_.end())
          for (int32_t s : it->second) first = std::min(first, Resolve(s));
    }
    magneton::analysis::Merge(regions_[m], regions_[r]);
    into_[r] = m;
    Assess(m);
    return first;
  }
  // The surviving regions, in order.
  void Compact() {
    std::vector<RegionMatch> kept;
    for (int32_t s = 0; s < n_; ++s)
      if (alive(s)) kept.push_back(std::move(regions_[s]));
    regions_ = std::move(kept);
  }

 private:
  int32_t Resolve(int32_t s) {
    while (into_[s] != s) s = into_[s] = into_[into_[s]];
    return s;
  }
  void Assess(int32_t s) {
    fused_a_[s] = FusedAway(a_, ca_, regions_[s].ops_a);
    fused_b_[s] = FusedAway(b_, cb_, regions_[s].ops_b);
    launch_a_[s] = ca_.Launches(regions_[s].ops_a);
    launch_b_[s] = cb_.Launches(regions_[s].ops_b);
  }

  const Run &a_, &b_;
  const CostModel &ca_, &cb_;
  std::vector<RegionMatch>& regions_;
  int32_t n_;
  std::vector<int32_t> into_;
  std::vector<char> fused_a_, fused_b_, launch_a_, launch_b_;
  std::unordered_map<int64_t, std::vector<int32_t>> producers_, consumers_;
};

}  // namespace

int MergeFusedRegions(const Run& a, const Run& b, const CostModel& ca, const CostModel& cb, MatchResult& match) {
  // Regions are taken in order and each fused one is merged into its
  // neighbour; after a merge the scan resumes at the first region the merge
  // may have changed, as a rescan from the start would, without paying for
  // the regions it cannot have changed.
  Slots slots(a, b, ca, cb, match.regions);
  int merged = 0;
  for (int32_t r = 0; r < slots.size(); ++r) {
    if (!slots.alive(r) || !slots.fused(r)) continue;
    int32_t m = slots.Neighbour(r, true);
    if (!slots.DoesTheWork(r, m)) m = slots.Neighbour(r, false);
    if (!slots.DoesTheWork(r, m)) continue;
    r = std::min(r, slots.Merge(r, m)) - 1;
    ++merged;
  }
  slots.Compact();
  return merged;
}

}  // namespace magneton::analysis
