#include "analysis/match/match_side.h"

#include <algorithm>

namespace magneton::analysis {

bool MatchSide::IsRootIn(int32_t v, int32_t begin) const {
  const Adjacency& p = graph.pred;
  for (const int32_t* u = p.from(v); u != p.to(v); ++u)
    if (*u >= begin) return false;
  return true;
}

int MatchSide::CommonFrames(int32_t x, int32_t y) const {
  auto stack_of = [&](int32_t v) -> const Stack* {
    const int64_t id = run->ops[graph.node_op[v]].stack;
    if (id < 0 || id >= static_cast<int64_t>(run->stacks.size()) || run->stacks[id].frames.empty()) return nullptr;
    return &run->stacks[id];
  };
  const Stack* sx = stack_of(x);
  const Stack* sy = stack_of(y);
  if (!sx || !sy) return -1;
  const auto& fx = sx->frames;
  const auto& fy = sy->frames;
  const int64_t n_frames = static_cast<int64_t>(run->frames.size());
  int depth = 0;
  for (size_t i = fx.size(), j = fy.size(); i > 0 && j > 0; --i, --j, ++depth) {
    if (fx[i - 1] == fy[j - 1]) continue;
    if (fx[i - 1] < 0 || fx[i - 1] >= n_frames || fy[j - 1] < 0 || fy[j - 1] >= n_frames) break;
    const Frame& a = run->frames[fx[i - 1]];
    const Frame& b = run->frames[fy[j - 1]];
    const bool innermost = i == 1 || j == 1;
    if (a.function != b.function || a.file != b.file || (!innermost && a.line != b.line)) break;
  }
  return depth;
}

namespace {

// A dead end that writes in place into a tensor it reads (an optimizer's
// parameter update, a KV cache filled in place) has an effect that outlives
// the step: it is an output even where its ancestry meets a component's.
// Tensor rows are versions: an in-place write returns a row of the same
// storage and offset with a higher version counter (a view or detach shares
// the counter without raising it).
bool UpdatesState(const MatchSide& s, int32_t v) {
  const Run& run = *s.run;
  const Op& op = run.ops[s.graph.node_op[v]];
  const int64_t n = static_cast<int64_t>(run.tensors.size());
  for (int64_t o : op.outputs)
    for (int64_t i : op.inputs) {
      if (o < 0 || o >= n || i < 0 || i >= n) continue;
      const Tensor &out = run.tensors[o], &in = run.tensors[i];
      if (out.storage == in.storage && out.offset == in.offset && out.version > in.version) return true;
    }
  return false;
}

// A dead end that returns a new value for a graph input it reads, of that
// input's shape and dtype, is one too: a functional parameter update (JAX's
// `p - lr * g`, whose result is what the step function returns). Without this
// a JAX training step had one output (the deepest update), and where the two
// sides computed one gradient differently the other updates and their
// gradients were side outputs: unmatched.
bool ReplacesGraphInput(const MatchSide& s, int32_t v, const std::vector<uint8_t>& written) {
  if (!s.graph.reads_graph_input[v]) return false;
  const Run& run = *s.run;
  const Op& op = run.ops[s.graph.node_op[v]];
  const int64_t n = static_cast<int64_t>(run.tensors.size());
  for (int64_t o : op.outputs)
    for (int64_t i : op.inputs) {
      if (o < 0 || o >= n || i < 0 || i >= n || written[i]) continue;
      const Tensor &out = run.tensors[o], &in = run.tensors[i];
      if (out.shape == in.shape && out.dtype == in.dtype && out.numel() > 1) return true;
    }
  return false;
}

// Picks main outputs and marks the core: dead ends in order of decreasing
// longest-path depth; one whose ancestry meets an existing component is a
// side output, one whose ancestry is new starts a component. Every node is
// explored at most once.
void FindComponents(MatchSide& s) {
  const DataflowGraph& g = s.graph;
  const int32_t n = g.num_nodes();
  std::vector<int32_t> longest(n, 0);
  for (int32_t v = 0; v < n; ++v)
    for (const int32_t* u = g.pred.from(v); u != g.pred.to(v); ++u) longest[v] = std::max(longest[v], longest[*u] + 1);
  std::vector<int32_t> dead_ends;
  for (int32_t v = 0; v < n; ++v)
    if (g.succ.size(v) == 0) dead_ends.push_back(v);
  // A dead end that wrote no value (aten::is_nonzero: a Python bool the host
  // branches on) is no output of the computation: it never takes a main output's
  // place from one that produces values, however deep it lies.
  auto valued = [&](int32_t v) { return g.writes.size(v) > 0; };
  std::sort(dead_ends.begin(), dead_ends.end(), [&](int32_t x, int32_t y) {
    if (valued(x) != valued(y)) return valued(x);
    return longest[x] != longest[y] ? longest[x] > longest[y] : x > y;
  });

  std::vector<uint8_t> written(s.run->tensors.size(), 0);
  for (const auto& value : g.values)
    if (value.tensor >= 0 && value.tensor < static_cast<int64_t>(written.size())) written[value.tensor] = 1;

  // walk[v]: the dead end whose walk reached v first, -1 while unseen.
  std::vector<int32_t> walk(n, -1);
  std::vector<uint8_t> side(n, 0);
  std::vector<int32_t> stack, seen;
  for (int32_t d : dead_ends) {
    if (walk[d] >= 0) continue;
    bool meets = false;
    seen.assign(1, d);
    stack.assign(1, d);
    walk[d] = d;
    while (!stack.empty()) {
      const int32_t v = stack.back();
      stack.pop_back();
      for (const int32_t* u = g.pred.from(v); u != g.pred.to(v); ++u) {
        if (walk[*u] >= 0) {
          meets |= walk[*u] != d;
          continue;
        }
        walk[*u] = d;
        seen.push_back(*u);
        stack.push_back(*u);
      }
    }
    // A side output is small beside the program (an unread cache, a logged
    // statistic). One whose walk brings in most of the graph is its work: a
    // generation loop's tokens feed a stopping check, so its last dead end is
    // the host's bool, and the decoding steps lie behind it alone.
    const bool most = 2 * seen.size() > static_cast<size_t>(n);
    if (meets && !UpdatesState(s, d) && !ReplacesGraphInput(s, d, written) && !most) {
      for (int32_t v : seen) side[v] = 1;
    } else {
      s.main_outputs.push_back(d);
    }
  }
  s.core.assign(n, 0);
  for (int32_t v = 0; v < n; ++v) s.core[v] = walk[v] >= 0 && !side[v];
  std::sort(s.main_outputs.begin(), s.main_outputs.end());
}

}  // namespace

MatchSide AnalyzeSide(const Run& run) {
  MatchSide s;
  s.run = &run;
  s.graph = BuildDataflowGraph(run);
  const DataflowGraph& g = s.graph;
  const int32_t n = g.num_nodes();
  FindComponents(s);

  s.flow.assign(n, 0);
  for (int32_t v = 0; v < n; ++v) {
    bool f = g.reads_graph_input[v];
    for (const int32_t* u = g.pred.from(v); u != g.pred.to(v) && !f; ++u) f = s.flow[*u];
    s.flow[v] = f;
  }

  std::vector<int32_t> order;
  order.reserve(n);
  for (int32_t v = n - 1; v >= 0; --v)
    if (s.core[v]) order.push_back(v);
  s.pdom = DominatorTree::Build(n, order, [&](int32_t v, auto&& visit) {
    for (const int32_t* w = g.succ.from(v); w != g.succ.to(v); ++w) visit(*w);
  });

  s.last_core_read.assign(g.values.size(), -1);
  for (int32_t v = 0; v < n; ++v) {
    if (!s.core[v]) continue;
    for (const int32_t* r = g.reads.from(v); r != g.reads.to(v); ++r) s.last_core_read[*r] = v;
  }
  return s;
}

}  // namespace magneton::analysis
