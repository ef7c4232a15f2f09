#include "analysis/diff/fused_regions.h"

#include <algorithm>

#include "analysis/diff/root_cause.h"

namespace magneton::analysis {
namespace {

// A side's ops of a region are fused away when they are XLA equations that do
// work and launched no kernel, on a run that recorded kernels at all. Eager
// frameworks launch their own kernels, so this applies to "jax" ops only.
bool Launches(const CostModel& cost, const std::vector<int64_t>& ops) { return !cost.KernelsOf(ops).kernels.empty(); }

bool FusedAway(const Run& run, const CostModel& cost, const std::vector<int64_t>& ops) {
  if (!cost.has_kernels() || ops.empty()) return false;
  RegionSide side{&run, &cost, &ops};
  auto compute = ComputeOps(side);
  if (compute.empty()) return false;
  for (auto id : compute)
    if (run.ops[id].framework != "jax") return false;
  return !Launches(cost, ops);
}

// Boundary tensors of the union: inputs not produced inside, outputs not consumed inside.
void MergeSide(std::vector<int64_t>& ops, std::vector<int64_t>& in, std::vector<int64_t>& out,
               const std::vector<int64_t>& ops2, const std::vector<int64_t>& in2, const std::vector<int64_t>& out2) {
  auto has = [](const std::vector<int64_t>& v, int64_t t) { return std::find(v.begin(), v.end(), t) != v.end(); };
  std::vector<int64_t> inputs, outputs;
  for (auto t : in)
    if (!has(out2, t) && !has(inputs, t)) inputs.push_back(t);
  for (auto t : in2)
    if (!has(out, t) && !has(inputs, t)) inputs.push_back(t);
  for (auto t : out)
    if (!has(in2, t) && !has(outputs, t)) outputs.push_back(t);
  for (auto t : out2)
    if (!has(in, t) && !has(outputs, t)) outputs.push_back(t);
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

// The region (other than r) that produces one of r's inputs (producer) or
// consumes one of its outputs, on side a's tensors (pairs share boundaries).
int Neighbour(const std::vector<RegionMatch>& regions, size_t r, bool producer) {
  const auto& mine = producer ? regions[r].inputs_a : regions[r].outputs_a;
  for (size_t i = 0; i < regions.size(); ++i) {
    if (i == r) continue;
    const auto& theirs = producer ? regions[i].outputs_a : regions[i].inputs_a;
    for (auto t : mine)
      if (std::find(theirs.begin(), theirs.end(), t) != theirs.end()) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

int MergeFusedRegions(const Run& a, const Run& b, const CostModel& ca, const CostModel& cb, MatchResult& match) {
  auto& regions = match.regions;
  int merged = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < regions.size() && !changed; ++r) {
      bool fused_a = FusedAway(a, ca, regions[r].ops_a), fused_b = FusedAway(b, cb, regions[r].ops_b);
      if (!fused_a && !fused_b) continue;
      // The neighbour must have kernels where this region has none, else merging explains nothing.
      auto does_the_work = [&](int n) {
        return n >= 0 && (!fused_a || Launches(ca, regions[n].ops_a)) && (!fused_b || Launches(cb, regions[n].ops_b));
      };
      int n = Neighbour(regions, r, true);
      if (!does_the_work(n)) n = Neighbour(regions, r, false);
      if (!does_the_work(n)) continue;
      Merge(regions[n], regions[r]);
      regions.erase(regions.begin() + static_cast<std::ptrdiff_t>(r));
      ++merged;
      changed = true;
    }
  }
  return merged;
}

}  // namespace magneton::analysis
