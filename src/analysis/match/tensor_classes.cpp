#include "analysis/match/tensor_classes.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <cstring>
#include <thread>
#include <unordered_map>

#include "analysis/fingerprint/candidate_index.h"
#include "analysis/fingerprint/fingerprint_compare.h"
#include "analysis/fingerprint/mix_hash.h"

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

uint64_t ClassHash(int32_t c) { return MixHash(static_cast<uint64_t>(c)); }

// What a value is worth as evidence of equivalence (docs/matching.md,
// "Tensor equivalence and tolerance" and "Data scalars").
enum class Evidence : uint8_t {
  kNone,
  kTensor,  // an informative fingerprint: at least two values, not all equal
  kScalar,  // a data scalar: one value computed from the data
};

// A floating-point value of one element, finite and not zero: a loss, a
// norm, a chunk's sum. Zero (an accumulator's start, an empty sum) equals
// every other zero; integer and bool scalars (counts, indices, flags) repeat
// everywhere.
bool ScalarValue(const Tensor& t) {
  if (!t.fingerprint || t.fingerprint->numel != 1 || ClassifyDtype(t.dtype) != DtypeClass::kFloat) return false;
  const double x = t.fingerprint->mean;
  return std::isfinite(x) && x != 0 && t.fingerprint->max == t.fingerprint->min;
}

// Per value of a side: its evidence. A scalar value is a data scalar when its
// node reads data: a tensor with an informative fingerprint (a reduction) or
// a data scalar (an accumulation). A scalar computed from scalars alone (a
// step counter, a bias correction from it) is the same number wherever that
// code runs.
std::vector<Evidence> EvidenceOf(const MatchSide& s) {
  const DataflowGraph& g = s.graph;
  const Run& run = *s.run;
  const int64_t n_tensors = static_cast<int64_t>(run.tensors.size());
  std::vector<Evidence> ev(g.values.size(), Evidence::kNone);
  auto reads_data = [&](int32_t node) {
    for (const int32_t* r = g.reads.from(node); r != g.reads.to(node); ++r)
      if (ev[*r] != Evidence::kNone) return true;
    for (int64_t i : run.ops[g.node_op[node]].inputs)
      if (i >= 0 && i < n_tensors && Informative(run.tensors[i])) return true;
    return false;
  };
  for (int32_t node = 0; node < g.num_nodes(); ++node) {
    int data = -1;  // reads_data(node), once asked
    for (const int32_t* x = g.writes.from(node); x != g.writes.to(node); ++x) {
      if (g.values[*x].tensor >= n_tensors) continue;
      const Tensor& t = run.tensors[g.values[*x].tensor];
      if (Informative(t)) {
        ev[*x] = Evidence::kTensor;
      } else if (ScalarValue(t)) {
        if (data < 0) data = reads_data(node);
        if (data) ev[*x] = Evidence::kScalar;
      }
    }
  }
  return ev;
}

// Finds, for each value that passes its input on unchanged (a view, a copy,
// a cast within tolerance), that input on the same side. Such a value needs
// no search of its own: one comparison with a nearby tensor instead of one
// per layout variant on the other side. Per value: the input it follows, -1
// when it leads its class (it is searched for, or indexed), -2 when it has no
// informative fingerprint.
struct Chains {
  std::vector<int32_t> follows;
  int64_t comparisons = 0;
};
Chains FindLayoutChains(const MatchSide& s, const std::vector<const Tensor*>& tensors,
                        const std::vector<Evidence>& evidence, double tolerance) {
  const DataflowGraph& g = s.graph;
  Chains c;
  c.follows.assign(tensors.size(), -2);
  for (size_t v = 0; v < tensors.size(); ++v) {
    const Tensor* t = tensors[v];
    if (!t || evidence[v] == Evidence::kNone) continue;
    c.follows[v] = -1;
    const int32_t node = g.values[v].producer;
    const double rms = RootMeanSquare(*t->fingerprint);
    for (const int32_t* r = g.reads.from(node); r != g.reads.to(node); ++r) {
      const Tensor* in = tensors[*r];
      if (!in || !in->fingerprint || in->fingerprint->numel != t->fingerprint->numel) continue;
      const double rms_in = RootMeanSquare(*in->fingerprint);
      if (std::fabs(rms - rms_in) > tolerance * std::max(rms, rms_in)) continue;  // cheap reject
      ++c.comparisons;
      if (FingerprintsWithin(*t, *in, tolerance)) {
        c.follows[v] = *r;
        break;
      }
    }
  }
  return c;
}

// Bitwise hash of what FingerprintDifference reads: the dtype class, the
// shape (spectra are compared by dims) and every fingerprint feature.
uint64_t ExactKey(const Tensor& t) {
  auto bits = [](double x) {
    uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
  };
  const Fingerprint& f = *t.fingerprint;
  uint64_t h = MixHash(static_cast<uint64_t>(ClassifyDtype(t.dtype)));
  auto mix = [&](uint64_t x) { h = MixHash(h ^ x); };
  for (int64_t d : t.shape) mix(static_cast<uint64_t>(d));
  for (double x : {static_cast<double>(f.numel), f.mean, f.stddev, f.min, f.max, f.l1, f.l2}) mix(bits(x));
  for (float q : f.quantiles) mix(bits(q));
  mix(static_cast<uint64_t>(f.spectra_kind));
  for (const auto& s : f.spectra) {
    mix(s.size());
    for (float x : s) mix(bits(x));
  }
  return h;
}

// Per value, the first value of its side with the very same fingerprint,
// shape and dtype class (itself when none came before), among the values
// that lead their class. A program repeated R times records every value R
// times over; comparing one of each with the other side's keeps the search
// at the size of one repetition instead of R x R comparisons, and the
// copies join their first one's class, as the search would have joined them.
std::vector<int32_t> FirstOfIdentical(const std::vector<const Tensor*>& tensors, const Chains& chains) {
  std::vector<int32_t> first(tensors.size());
  std::unordered_map<uint64_t, std::vector<int32_t>> seen;
  for (size_t v = 0; v < tensors.size(); ++v) {
    first[v] = static_cast<int32_t>(v);
    if (chains.follows[v] != -1) continue;
    const Tensor& t = *tensors[v];
    auto& bucket = seen[ExactKey(t)];
    for (int32_t u : bucket) {
      const Tensor& o = *tensors[u];
      if (o.shape == t.shape && *o.fingerprint == *t.fingerprint && ClassifyDtype(o.dtype) == ClassifyDtype(t.dtype)) {
        first[v] = u;
        break;
      }
    }
    if (first[v] == static_cast<int32_t>(v)) bucket.push_back(first[v]);
  }
  return first;
}

// Runs body(worker, begin, end) over [0, n) split among `threads` threads.
template <class Body>
void ParallelFor(int32_t n, int threads, Body&& body) {
  threads = std::max(1, std::min(threads, n / 4096 + 1));
  std::vector<std::thread> pool;
  for (int w = 1; w < threads; ++w)
    pool.emplace_back(body, w, static_cast<int32_t>(int64_t(n) * w / threads),
                      static_cast<int32_t>(int64_t(n) * (w + 1) / threads));
  body(0, 0, static_cast<int32_t>(int64_t(n) / threads));
  for (auto& t : pool) t.join();
}

}  // namespace

TensorClasses ClassifyValues(const MatchSide& a, const MatchSide& b, double tolerance, int max_equivalents,
                             int threads) {
  TensorClasses out;
  const std::vector<const Tensor*> ta = CoreValueTensors(a), tb = CoreValueTensors(b);
  const int32_t na = static_cast<int32_t>(ta.size()), nb = static_cast<int32_t>(tb.size());
  std::vector<Evidence> ev_a, ev_b;
  Chains chains_a, chains_b;
  {
    std::thread other([&] {
      ev_b = EvidenceOf(b);
      chains_b = FindLayoutChains(b, tb, ev_b, tolerance);
    });
    ev_a = EvidenceOf(a);
    chains_a = FindLayoutChains(a, ta, ev_a, tolerance);
    other.join();
  }
  out.comparisons = chains_a.comparisons + chains_b.comparisons;
  const std::vector<int32_t> first_a = FirstOfIdentical(ta, chains_a), first_b = FirstOfIdentical(tb, chains_b);
  std::vector<const Tensor*> indexed(tb);
  for (int32_t w = 0; w < nb; ++w)
    if (chains_b.follows[w] != -1 || first_b[w] != w) indexed[w] = nullptr;
  const CandidateIndex index(indexed, tolerance);

  // Search each leading value of side a among side b's, in parallel; each
  // worker keeps its own pairs and counts.
  struct Found {
    std::vector<std::pair<int32_t, int32_t>> pairs;
    int64_t comparisons = 0;
  };
  std::vector<Found> found(std::max(1, threads));
  struct Query {
    int64_t locality;
    int32_t value;
    CandidateIndex::Query features;
  };
  std::vector<Query> queries;
  for (int32_t v = 0; v < na; ++v) {
    if (chains_a.follows[v] != -1 || first_a[v] != v) continue;
    Query q{0, v, CandidateIndex::Describe(*ta[v])};
    q.locality = index.Locality(q.features);
    if (q.locality >= 0) queries.push_back(q);
  }
  std::sort(queries.begin(), queries.end(), [](const Query& x, const Query& y) { return x.locality < y.locality; });
  const double size_a = std::max(1, a.size()), size_b = std::max(1, b.size());
  const int32_t nq = static_cast<int32_t>(queries.size());
  ParallelFor(nq, static_cast<int>(found.size()), [&](int worker, int32_t begin, int32_t end) {
    Found& f = found[worker];
    std::vector<std::pair<double, int32_t>> near;  // (distance in relative position, b value)
    for (int32_t q = begin; q < end; ++q) {
      const int32_t v = queries[q].value;
      const double pos = a.graph.values[v].producer / size_a;
      near.clear();
      index.ForEachCandidate(queries[q].features, [&](int32_t w) {
        ++f.comparisons;
        if (FingerprintsWithin(*ta[v], *tb[w], tolerance))
          near.emplace_back(std::fabs(b.graph.values[w].producer / size_b - pos), w);
      });
      if (static_cast<int>(near.size()) > max_equivalents) {
        std::nth_element(near.begin(), near.begin() + max_equivalents, near.end());
        near.resize(max_equivalents);
      }
      for (auto& [dist, w] : near) f.pairs.emplace_back(v, w);
    }
  });

  // Data scalars: the index holds tensors of two values or more. A scalar's
  // fingerprint is its value, so side b's leading scalars are sorted by it
  // and each of side a's is compared with those in reach: within tolerance t
  // of x, |y - x| <= |x| t / (1 - t) (1% slack for rounding).
  {
    std::vector<std::pair<double, int32_t>> scalars_b;  // (value, b value)
    for (int32_t w = 0; w < nb; ++w)
      if (indexed[w] && ev_b[w] == Evidence::kScalar) scalars_b.emplace_back(indexed[w]->fingerprint->mean, w);
    std::sort(scalars_b.begin(), scalars_b.end());
    Found& f = found[0];
    std::vector<std::pair<double, int32_t>> near;
    for (int32_t v = 0; v < na && !scalars_b.empty(); ++v) {
      if (chains_a.follows[v] != -1 || first_a[v] != v || ev_a[v] != Evidence::kScalar) continue;
      const double x = ta[v]->fingerprint->mean;
      const double reach = tolerance < 1 ? 1.01 * std::fabs(x) * tolerance / (1 - tolerance) : INFINITY;
      const double pos = a.graph.values[v].producer / size_a;
      near.clear();
      auto it = std::lower_bound(scalars_b.begin(), scalars_b.end(), x - reach,
                                 [](const std::pair<double, int32_t>& e, double y) { return e.first < y; });
      for (; it != scalars_b.end() && it->first <= x + reach; ++it) {
        ++f.comparisons;
        if (FingerprintsWithin(*ta[v], *tb[it->second], tolerance))
          near.emplace_back(std::fabs(b.graph.values[it->second].producer / size_b - pos), it->second);
      }
      if (static_cast<int>(near.size()) > max_equivalents) {
        std::nth_element(near.begin(), near.begin() + max_equivalents, near.end());
        near.resize(max_equivalents);
      }
      for (auto& [dist, w] : near) f.pairs.emplace_back(v, w);
    }
  }

  UnionFind uf(static_cast<size_t>(na) + nb);
  for (int32_t v = 0; v < na; ++v)
    if (chains_a.follows[v] >= 0) uf.Join(v, chains_a.follows[v]);
  for (int32_t w = 0; w < nb; ++w)
    if (chains_b.follows[w] >= 0) uf.Join(na + w, na + chains_b.follows[w]);
  for (int32_t v = 0; v < na; ++v) uf.Join(v, first_a[v]);
  for (int32_t w = 0; w < nb; ++w) uf.Join(na + w, na + first_b[w]);
  for (const Found& f : found) {
    out.comparisons += f.comparisons;
    out.equivalences += static_cast<int64_t>(f.pairs.size());
    for (auto [v, w] : f.pairs) uf.Join(v, na + w);
  }
  out.of_a.assign(na, -1);
  out.of_b.assign(nb, -1);
  for (int32_t v = 0; v < na; ++v)
    if (ta[v] && ev_a[v] != Evidence::kNone) out.of_a[v] = uf.Find(v);
  for (int32_t w = 0; w < nb; ++w)
    if (tb[w] && ev_b[w] != Evidence::kNone) out.of_b[w] = uf.Find(na + w);
  return out;
}

std::vector<uint64_t> CrossingHashes(const MatchSide& side, const std::vector<int32_t>& classes) {
  const DataflowGraph& g = side.graph;
  const int32_t n = g.num_nodes();
  // Saved activations: one side's attention saves its probabilities for the
  // backward pass, the other (a fused kernel) its log-sum-exp and scaled
  // inputs. Were they crossing until the backward reads them, no cut could
  // form between a layer's forward and its backward, and a training step
  // would be one region from the first layer's forward to its backward. A
  // value a forward op writes crosses until its last reader outside the
  // backward pass: the backward, cut from the forward, computes the same
  // gradients from either side's saved values (its outputs are compared).
  auto backward = [&](int32_t node) { return side.run->ops[g.node_op[node]].forward_op != kNone; };
  std::vector<int32_t> last_read = side.last_core_read;
  for (size_t v = 0; v < g.values.size(); ++v)
    if (!backward(g.values[v].producer)) last_read[v] = g.values[v].producer;  // raised below
  for (int32_t u = 0; u < n; ++u)
    if (!backward(u))
      for (const int32_t* x = g.reads.from(u); x != g.reads.to(u); ++x)
        last_read[*x] = std::min(std::max(last_read[*x], u), side.last_core_read[*x]);
  // A mask built once and read by every layer (HF's eager causal mask) on
  // one side only, where the other masks inside a fused kernel, would keep
  // every cut from forming between the layers: masks say where, not what,
  // and do not cross.
  std::vector<uint8_t> mask(g.values.size());
  // A data scalar is its one value, not a mask: it crosses.
  for (size_t v = 0; v < g.values.size(); ++v) {
    const Tensor& t = side.run->tensors[g.values[v].tensor];
    mask[v] = Informative(t) && TwoValued(t);
  }
  // Live intervals [writer, last reader) of data values, as add and remove
  // events bucketed by position.
  std::vector<int32_t> add_begin(n + 1, 0), drop_begin(n + 1, 0);
  auto live = [&](size_t v) {
    const int32_t p = g.values[v].producer;
    return classes[v] >= 0 && side.flow[p] && last_read[v] > p && !mask[v];
  };
  for (size_t v = 0; v < g.values.size(); ++v)
    if (live(v)) {
      ++add_begin[g.values[v].producer + 1];
      ++drop_begin[last_read[v] + 1];
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
        drops[fd[last_read[v]]++] = classes[v];
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
