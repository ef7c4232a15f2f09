// Algorithm 1 of the Magneton paper (§4.2), as described in docs/matching.md:
// cut points are nodes on post-dominator paths whose values have equivalents
// on the other side and whose cut lets only equivalent data cross; the
// longest monotone chain of them splits both runs into corresponding pieces;
// each piece is matched again with the dominator path from its own entry
// until no further cut exists.
#include "analysis/match/region_match.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "analysis/fingerprint/fingerprint_compare.h"
#include "analysis/fingerprint/mix_hash.h"
#include "analysis/match/cut_chain.h"
#include "analysis/match/match_side.h"
#include "analysis/match/tensor_classes.h"

namespace magneton::analysis {

namespace {

// (crossing hash, class): salted, because a crossing hash of one live class
// is that class's own hash.
uint64_t CutKey(uint64_t crossing, int32_t cls) {
  return MixHash(MixHash(crossing ^ 0xd6e8feb86659fd93ULL) ^ static_cast<uint64_t>(cls));
}

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

constexpr int kMaxPairsPerCut = 32;  // candidate partners per cut node, nearest in rank

// Positions [begin, end] on each side; `end` is the piece's exit: a cut node
// already matched with the other side's end.
struct Piece {
  int32_t begin_a, end_a, begin_b, end_b;
  int depth;
};

class Matcher {
 public:
  Matcher(const Run& a, const Run& b, const MatchOptions& options) : options_(options) {
    auto t0 = Clock::now();
    std::thread other([&] { b_ = AnalyzeSide(b); });  // the two graphs are independent
    a_ = AnalyzeSide(a);
    other.join();
    auto t1 = Clock::now();
    const int threads =
        options_.threads > 0 ? options_.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    classes_ = ClassifyValues(a_, b_, options_.tolerance, options_.max_equivalents, threads);
    hash_a_ = CrossingHashes(a_, classes_.of_a);
    hash_b_ = CrossingHashes(b_, classes_.of_b);
    class_sides_.assign(classes_.of_a.size() + classes_.of_b.size(), 0);
    for (int32_t c : classes_.of_a)
      if (c >= 0) class_sides_[c] |= 1;
    for (int32_t c : classes_.of_b)
      if (c >= 0) class_sides_[c] |= 2;
    result_.stats.graph_seconds = Seconds(t0, t1);
    result_.stats.classes_seconds = Seconds(t1, Clock::now());
  }

  MatchResult Match();

 private:
  const std::vector<int32_t>& ClassesOf(const MatchSide& s) const { return &s == &a_ ? classes_.of_a : classes_.of_b; }
  // How good an entry v is for a spine, higher first: a root of the piece,
  // carrying data, writing a value the other run also has, deepest.
  using Rank = std::tuple<bool, bool, bool, int32_t>;
  Rank EntryRank(const MatchSide& s, int32_t v, bool root) const;
  static std::vector<int32_t> TopCandidates(const MatchSide& s);
  std::vector<int32_t> PieceSpine(const MatchSide& s, int32_t begin, int32_t end) const;
  static int32_t PlaceCut(const MatchSide& s, const std::vector<int32_t>& run, int32_t consumer);
  std::vector<std::pair<int32_t, int32_t>> ChooseCuts(const std::vector<int32_t>& sa, const std::vector<int32_t>& sb);
  void Split(const std::vector<std::pair<int32_t, int32_t>>& cuts, int32_t begin_a, int32_t begin_b, int depth);
  void EmitLeaf(const Piece& p);

  MatchOptions options_;
  MatchSide a_, b_;
  TensorClasses classes_;
  std::vector<uint8_t> class_sides_;  // per class: bit 0 has values in a, bit 1 in b
  std::vector<uint64_t> hash_a_, hash_b_;
  std::vector<Piece> work_;
  std::vector<std::pair<int32_t, RegionMatch>> leaves_;  // (begin_a, region)
  MatchResult result_;
};

Matcher::Rank Matcher::EntryRank(const MatchSide& s, int32_t v, bool root) const {
  const auto& cls = ClassesOf(s);
  bool partnered = false;
  for (const int32_t* x = s.graph.writes.from(v); x != s.graph.writes.to(v) && !partnered; ++x)
    partnered = cls[*x] >= 0 && class_sides_[cls[*x]] == 3;
  return {root, s.flow[v] != 0, partnered, s.pdom.depth(v)};
}

// The top-level cut candidates: every core node that carries data, in
// execution order. A program with one output (inference) has a post-dominator
// path through it, but a training step has an output per parameter update,
// joined only at the virtual sink: no path runs through its forward and
// backward passes. The crossing hash alone makes a cut sound: only equivalent
// data is live across it on both sides.
std::vector<int32_t> Matcher::TopCandidates(const MatchSide& s) {
  std::vector<int32_t> out;
  for (int32_t v = 0; v < s.size(); ++v)
    if (s.core[v] && s.flow[v]) out.push_back(v);
  return out;
}

// The cut candidates inside a piece: the post-dominator path from the
// piece's best entry to its exit (exclusive). Entries are the nodes the exit
// post-dominates, ranked by EntryRank: a node with no predecessor inside the
// piece first; without one, the deepest node the exit post-dominates.
std::vector<int32_t> Matcher::PieceSpine(const MatchSide& s, int32_t begin, int32_t end) const {
  const DominatorTree& t = s.pdom;
  int32_t best = -1;
  Rank best_rank{};
  for (int32_t v = begin; v < end; ++v) {
    if (!s.core[v] || !t.Dominates(end, v)) continue;
    const Rank rank = EntryRank(s, v, s.IsRootIn(v, begin));
    if (best < 0 || rank > best_rank) {
      best = v;
      best_rank = rank;
    }
  }
  std::vector<int32_t> spine;
  for (int32_t v = best; v >= 0 && v != end; v = t.idom(v)) spine.push_back(v);
  return spine;
}

// Where to cut a run of layout ops that follow the op computing a value
// (run[0]): each op goes with the producer or with the consumer, whichever
// call stack it shares more frames with, so Conv1D's view(size_out) stays
// with its addmm and a cast at the top of a module goes with that module.
// Without stacks, all stay with the producer.
int32_t Matcher::PlaceCut(const MatchSide& s, const std::vector<int32_t>& run, int32_t consumer) {
  int32_t cut = run.back();
  if (consumer < 0 || run.size() == 1) return cut;
  for (size_t i = run.size(); i-- > 1;) {
    const int to_producer = s.CommonFrames(run[i], run[0]), to_consumer = s.CommonFrames(run[i], consumer);
    if (to_producer >= to_consumer) break;
    cut = run[i - 1];
  }
  return cut;
}

// Pairs spine nodes of the two sides that write values of one class and
// whose cuts let the same classes cross; returns the longest monotone chain.
std::vector<std::pair<int32_t, int32_t>> Matcher::ChooseCuts(const std::vector<int32_t>& sa,
                                                             const std::vector<int32_t>& sb) {
  if (sa.empty() || sb.empty()) return {};
  struct Entry {
    int32_t node;
    uint64_t hash;
    std::vector<int32_t> classes;
    std::vector<int32_t> run;  // spine nodes passing the same value on, node among them
  };
  auto entries = [&](const MatchSide& s, const std::vector<int32_t>& spine, const std::vector<uint64_t>& hash) {
    const auto& cls = ClassesOf(s);
    std::vector<Entry> out;
    for (int32_t v : spine) {
      Entry e{v, hash[v], {}, {v}};
      for (const int32_t* x = s.graph.writes.from(v); x != s.graph.writes.to(v); ++x)
        if (cls[*x] >= 0) e.classes.push_back(cls[*x]);
      if (e.classes.empty()) continue;
      std::sort(e.classes.begin(), e.classes.end());
      e.classes.erase(std::unique(e.classes.begin(), e.classes.end()), e.classes.end());
      // A run of layout ops (view, permute, contiguous, cast) passes one value
      // on: it yields one cut candidate, placed below.
      if (!out.empty() && out.back().hash == e.hash &&
          std::find_first_of(out.back().classes.begin(), out.back().classes.end(), e.classes.begin(),
                             e.classes.end()) != out.back().classes.end()) {
        out.back().run.push_back(v);
        continue;
      }
      out.push_back(std::move(e));
    }
    for (size_t k = 0; k < out.size(); ++k)
      out[k].node = PlaceCut(s, out[k].run, k + 1 < out.size() ? out[k + 1].run.front() : -1);
    return out;
  };
  const std::vector<Entry> ea = entries(a_, sa, hash_a_), eb = entries(b_, sb, hash_b_);
  std::unordered_map<uint64_t, std::vector<int32_t>> by_key;
  for (int32_t j = 0; j < static_cast<int32_t>(eb.size()); ++j)
    for (int32_t c : eb[j].classes) by_key[CutKey(eb[j].hash, c)].push_back(j);
  std::vector<std::pair<int32_t, int32_t>> pairs, mine;
  const double scale = static_cast<double>(eb.size()) / std::max<size_t>(ea.size(), 1);
  for (int32_t i = 0; i < static_cast<int32_t>(ea.size()); ++i) {
    mine.clear();
    for (int32_t c : ea[i].classes) {
      auto it = by_key.find(CutKey(ea[i].hash, c));
      if (it == by_key.end()) continue;
      for (int32_t j : it->second) mine.emplace_back(i, j);
    }
    if (static_cast<int>(mine.size()) > kMaxPairsPerCut) {
      // Repeated identical computations: keep the partners nearest in rank.
      auto off = [&](const std::pair<int32_t, int32_t>& p) { return std::abs(p.second - i * scale); };
      std::nth_element(mine.begin(), mine.begin() + kMaxPairsPerCut, mine.end(),
                       [&](const auto& x, const auto& y) { return off(x) < off(y); });
      mine.resize(kMaxPairsPerCut);
    }
    pairs.insert(pairs.end(), mine.begin(), mine.end());
  }
  std::vector<std::pair<int32_t, int32_t>> cuts;
  for (auto [i, j] : LongestMonotoneChain(std::move(pairs))) {
    cuts.emplace_back(ea[i].node, eb[j].node);
    // The equivalent values that make this a cut point.
    const auto& ca = classes_.of_a;
    const auto& cb = classes_.of_b;
    const auto& ga = a_.graph;
    const auto& gb = b_.graph;
    for (const int32_t* x = ga.writes.from(ea[i].node); x != ga.writes.to(ea[i].node); ++x) {
      const int32_t* y = gb.writes.from(eb[j].node);
      while (y != gb.writes.to(eb[j].node) && (ca[*x] < 0 || cb[*y] != ca[*x])) ++y;
      if (y != gb.writes.to(eb[j].node)) {
        result_.tensor_pairs.emplace_back(ga.values[*x].tensor, gb.values[*y].tensor);
        break;
      }
    }
  }
  result_.stats.cut_points += static_cast<int64_t>(cuts.size());
  return cuts;
}

// Queues the pieces between consecutive cuts; the last cut closes the last piece.
void Matcher::Split(const std::vector<std::pair<int32_t, int32_t>>& cuts, int32_t begin_a, int32_t begin_b, int depth) {
  for (auto [ca, cb] : cuts) {
    work_.push_back({begin_a, ca, begin_b, cb, depth});
    begin_a = ca + 1;
    begin_b = cb + 1;
  }
}

void Matcher::EmitLeaf(const Piece& p) {
  RegionMatch r;
  r.depth = p.depth;
  for (int32_t v = p.begin_a; v <= p.end_a; ++v) r.ops_a.push_back(a_.graph.node_op[v]);
  for (int32_t v = p.begin_b; v <= p.end_b; ++v) r.ops_b.push_back(b_.graph.node_op[v]);

  // Boundary values by class: data read from before the piece, and values
  // read after it (or written by the exit, the cut itself).
  auto boundary = [&](const MatchSide& s, int32_t begin, int32_t end, bool inputs) {
    const auto& cls = ClassesOf(s);
    const DataflowGraph& g = s.graph;
    std::vector<std::pair<int32_t, int32_t>> out;  // (class, value)
    for (int32_t v = begin; v <= end; ++v) {
      const Adjacency& adj = inputs ? g.reads : g.writes;
      for (const int32_t* x = adj.from(v); x != adj.to(v); ++x) {
        if (cls[*x] < 0) continue;
        const int32_t producer = g.values[*x].producer;
        const bool keep = inputs ? producer < begin && s.flow[producer] : (v == end || s.last_core_read[*x] > end);
        if (keep) out.emplace_back(cls[*x], *x);
      }
    }
    std::stable_sort(out.begin(), out.end(), [](auto& x, auto& y) { return x.first < y.first; });
    out.erase(std::unique(out.begin(), out.end(), [](auto& x, auto& y) { return x.first == y.first; }), out.end());
    return out;
  };
  auto pair_up = [&](bool inputs, std::vector<int64_t>& ta, std::vector<int64_t>& tb) {
    auto xa = boundary(a_, p.begin_a, p.end_a, inputs), xb = boundary(b_, p.begin_b, p.end_b, inputs);
    for (size_t i = 0, j = 0; i < xa.size() && j < xb.size();) {
      if (xa[i].first < xb[j].first) {
        ++i;
      } else if (xb[j].first < xa[i].first) {
        ++j;
      } else {
        ta.push_back(a_.graph.values[xa[i++].second].tensor);
        tb.push_back(b_.graph.values[xb[j++].second].tensor);
      }
    }
  };
  pair_up(true, r.inputs_a, r.inputs_b);
  pair_up(false, r.outputs_a, r.outputs_b);
  for (size_t k = 0; k < r.outputs_a.size(); ++k)
    r.output_rel_diff = std::max(
        r.output_rel_diff, FingerprintDifference(a_.run->tensors[r.outputs_a[k]], b_.run->tensors[r.outputs_b[k]]));
  leaves_.emplace_back(p.begin_a, std::move(r));
}

MatchResult Matcher::Match() {
  const auto start = Clock::now();
  auto& st = result_.stats;
  st.nodes_a = a_.size();
  st.nodes_b = b_.size();
  st.core_a = std::count(a_.core.begin(), a_.core.end(), 1);
  st.core_b = std::count(b_.core.begin(), b_.core.end(), 1);
  st.components_a = static_cast<int64_t>(a_.main_outputs.size());
  st.components_b = static_cast<int64_t>(b_.main_outputs.size());
  st.comparisons = classes_.comparisons;
  st.equivalences = classes_.equivalences;

  // Depth 0: the whole runs. Before the first cut both programs start from
  // their (assumed equal) inputs; after the last cut nothing equivalent comes
  // out, so that tail stays unmatched.
  const auto top = ChooseCuts(TopCandidates(a_), TopCandidates(b_));
  Split(top, 0, 0, 1);
  const int32_t tail_a = top.empty() ? 0 : top.back().first + 1;
  const int32_t tail_b = top.empty() ? 0 : top.back().second + 1;
  for (int32_t v = tail_a; v < a_.size(); ++v) result_.unmatched_a.push_back(a_.graph.node_op[v]);
  for (int32_t v = tail_b; v < b_.size(); ++v) result_.unmatched_b.push_back(b_.graph.node_op[v]);

  while (!work_.empty()) {
    const Piece p = work_.back();
    work_.pop_back();
    const auto cuts = ChooseCuts(PieceSpine(a_, p.begin_a, p.end_a), PieceSpine(b_, p.begin_b, p.end_b));
    if (cuts.empty()) {
      EmitLeaf(p);
      continue;
    }
    Split(cuts, p.begin_a, p.begin_b, p.depth + 1);
    work_.push_back({cuts.back().first + 1, p.end_a, cuts.back().second + 1, p.end_b, p.depth + 1});
  }

  std::sort(leaves_.begin(), leaves_.end(), [](auto& x, auto& y) { return x.first < y.first; });
  st.cuts_seconds = Seconds(start, Clock::now());
  for (auto& [begin, r] : leaves_) {
    r.id = static_cast<int64_t>(result_.regions.size());
    result_.regions.push_back(std::move(r));
  }
  return std::move(result_);
}

}  // namespace

MatchResult MatchRuns(const Run& a, const Run& b, const MatchOptions& options) {
  return Matcher(a, b, options).Match();
}

}  // namespace magneton::analysis
