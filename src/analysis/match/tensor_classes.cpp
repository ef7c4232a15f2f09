#include "analysis/match/tensor_classes.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "analysis/fingerprint/candidate_index.h"
#include "analysis/fingerprint/fingerprint_compare.h"

namespace magneton::analysis {

namespace {

class UnionFind {
 public:
  explicit UnionFind(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int32_t Find(int32_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Join(int32_t x, int32_t y) {
    x = Find(x);
    y = Find(y);
    if (x != y) parent_[std::max(x, y)] = std::min(x, y);
  }

 private:
  std::vector<int32_t> parent_;
};

// The tensor of each value written by a core node, else nullptr.
std::vector<const Tensor*> CoreValueTensors(const MatchSide& s) {
  const auto& values = s.graph.values;
  std::vector<const Tensor*> out(values.size(), nullptr);
  const int64_t n_tensors = static_cast<int64_t>(s.run->tensors.size());
  for (size_t v = 0; v < values.size(); ++v)
    if (s.core[values[v].producer] && values[v].tensor < n_tensors) out[v] = &s.run->tensors[values[v].tensor];
  return out;
}

uint64_t ClassHash(int32_t c) {
  uint64_t x = static_cast<uint64_t>(c) + 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

// Joins each value that passes its input on unchanged (a view, a copy, a
// cast within tolerance) with that input, on one side. Such a value needs no
// search of its own: one comparison with a nearby tensor, instead of one per
// layout variant on the other side. Returns, per value, whether it leads its
// class (it is searched for, or indexed).
std::vector<uint8_t> JoinLayoutChains(const MatchSide& s, const std::vector<const Tensor*>& tensors,
                                      double tolerance, int32_t offset, UnionFind& uf, int64_t& comparisons) {
  const DataflowGraph& g = s.graph;
  std::vector<uint8_t> leads(tensors.size(), 0);
  for (size_t v = 0; v < tensors.size(); ++v) {
    const Tensor* t = tensors[v];
    if (!t || !Informative(*t)) continue;
    leads[v] = 1;
    const int32_t node = g.values[v].producer;
    const double rms = RootMeanSquare(*t->fingerprint);
    for (const int32_t* r = g.reads.from(node); r != g.reads.to(node); ++r) {
      const Tensor* in = tensors[*r];
      if (!in || !in->fingerprint || in->fingerprint->numel != t->fingerprint->numel) continue;
      const double rms_in = RootMeanSquare(*in->fingerprint);
      if (std::fabs(rms - rms_in) > tolerance * std::max(rms, rms_in)) continue;  // cheap reject
      ++comparisons;
      if (FingerprintDifference(*t, *in) <= tolerance) {
        uf.Join(offset + static_cast<int32_t>(v), offset + *r);
        leads[v] = 0;
        break;
      }
    }
  }
  return leads;
}

TensorClasses ClassifyValues(const MatchSide& a, const MatchSide& b, double tolerance, int max_equivalents) {
  TensorClasses out;
  const std::vector<const Tensor*> ta = CoreValueTensors(a), tb = CoreValueTensors(b);
  const int32_t na = static_cast<int32_t>(ta.size()), nb = static_cast<int32_t>(tb.size());
  UnionFind uf(static_cast<size_t>(na) + nb);
  const std::vector<uint8_t> lead_a = JoinLayoutChains(a, ta, tolerance, 0, uf, out.comparisons);
  const std::vector<uint8_t> lead_b = JoinLayoutChains(b, tb, tolerance, na, uf, out.comparisons);
  std::vector<const Tensor*> indexed(tb);
  for (int32_t w = 0; w < nb; ++w)
    if (!lead_b[w]) indexed[w] = nullptr;
  CandidateIndex index(indexed, tolerance);
  const double size_a = std::max(1, a.size()), size_b = std::max(1, b.size());
  std::vector<std::pair<double, int32_t>> found;  // (distance in relative position, b value)
  for (int32_t v = 0; v < na; ++v) {
    if (!lead_a[v]) continue;
    const double pos = a.graph.values[v].producer / size_a;
    found.clear();
    index.ForEachCandidate(*ta[v], [&](int32_t w) {
      ++out.comparisons;
      if (FingerprintDifference(*ta[v], *tb[w]) <= tolerance)
        found.emplace_back(std::fabs(b.graph.values[w].producer / size_b - pos), w);
    });
    if (static_cast<int>(found.size()) > max_equivalents) {
      std::nth_element(found.begin(), found.begin() + max_equivalents, found.end());
      found.resize(max_equivalents);
    }
    out.equivalences += static_cast<int64_t>(found.size());
    for (auto& [dist, w] : found) uf.Join(v, na + w);
  }
  out.of_a.assign(na, -1);
  out.of_b.assign(nb, -1);
  for (int32_t v = 0; v < na; ++v)
    if (ta[v] && Informative(*ta[v])) out.of_a[v] = uf.Find(v);
  for (int32_t w = 0; w < nb; ++w)
    if (tb[w] && Informative(*tb[w])) out.of_b[w] = uf.Find(na + w);
  return out;
}

std::vector<uint64_t> CrossingHashes(const MatchSide& side, const std::vector<int32_t>& classes) {
  const DataflowGraph& g = side.graph;
  const int32_t n = g.num_nodes();
  // Live intervals [writer, last core reader) of data values, as add and
  // remove events bucketed by position.
  std::vector<int32_t> add_begin(n + 1, 0), drop_begin(n + 1, 0);
  auto live = [&](size_t v) {
    const int32_t p = g.values[v].producer;
    return classes[v] >= 0 && side.flow[p] && side.last_core_read[v] > p;
  };
  for (size_t v = 0; v < g.values.size(); ++v)
    if (live(v)) {
      ++add_begin[g.values[v].producer + 1];
      ++drop_begin[side.last_core_read[v] + 1];
    }
  for (int32_t p = 0; p < n; ++p) {
    add_begin[p + 1] += add_begin[p];
    drop_begin[p + 1] += drop_begin[p];
  }
  std::vector<int32_t> adds(add_begin[n]), drops(drop_begin[n]);
  {
    std::vector<int32_t> fa(add_begin.begin(), add_begin.end() - 1), fd(drop_begin.begin(), drop_begin.end() - 1);
    for (size_t v = 0; v < g.values.size(); ++v)
      if (live(v)) {
        adds[fa[g.values[v].producer]++] = classes[v];
        drops[fd[side.last_core_read[v]]++] = classes[v];
      }
  }
  // Set semantics: a class counts once however many views of it are live.
  int32_t max_class = -1;
  for (int32_t c : classes) max_class = std::max(max_class, c);
  std::vector<int32_t> count(max_class + 1, 0);
  std::vector<uint64_t> hash(n);
  uint64_t h = 0;
  for (int32_t p = 0; p < n; ++p) {
    for (int32_t i = drop_begin[p]; i < drop_begin[p + 1]; ++i)
      if (--count[drops[i]] == 0) h -= ClassHash(drops[i]);
    for (int32_t i = add_begin[p]; i < add_begin[p + 1]; ++i)
      if (count[adds[i]]++ == 0) h += ClassHash(adds[i]);
    hash[p] = h;
  }
  return hash;
}

}  // namespace magneton::analysis
