#include "analysis/match/dataflow_graph.h"

#include <algorithm>
#include <utility>

namespace magneton::analysis {

namespace {

// Groups (key, item) pairs by key into an adjacency list, dropping repeated
// items per key (marks[] is scratch sized to the item universe, all -1).
Adjacency Group(int32_t keys, const std::vector<std::pair<int32_t, int32_t>>& pairs, std::vector<int32_t>& marks) {
  Adjacency a;
  a.begin.assign(keys + 1, 0);
  for (auto& [k, v] : pairs) ++a.begin[k + 1];
  for (int32_t k = 0; k < keys; ++k) a.begin[k + 1] += a.begin[k];
  std::vector<int32_t> fill(a.begin.begin(), a.begin.end() - 1);
  a.adj.resize(pairs.size());
  for (auto& [k, v] : pairs) a.adj[fill[k]++] = v;
  // Deduplicate in place, keeping first occurrences.
  int32_t out = 0;
  for (int32_t k = 0; k < keys; ++k) {
    const int32_t b = a.begin[k], e = a.begin[k + 1];
    a.begin[k] = out;
    for (int32_t i = b; i < e; ++i) {
      const int32_t v = a.adj[i];
      if (marks[v] == k) continue;
      marks[v] = k;
      a.adj[out++] = v;
    }
  }
  a.begin[keys] = out;
  a.adj.resize(out);
  return a;
}

}  // namespace

DataflowGraph BuildDataflowGraph(const Run& run) {
  DataflowGraph g;
  const int64_t n_ops = static_cast<int64_t>(run.ops.size());
  const int64_t n_tensors = static_cast<int64_t>(run.tensors.size());

  // The node of each op: the outermost op with tensors on its parent chain.
  constexpr int32_t kUnresolved = -2;
  g.op_node.assign(n_ops, kUnresolved);
  std::vector<int64_t> chain;
  for (int64_t op = 0; op < n_ops; ++op) {
    chain.clear();
    int64_t o = op;
    // Walk up to a resolved ancestor; the depth bound stops a corrupt cycle.
    while (o >= 0 && o < n_ops && g.op_node[o] == kUnresolved && static_cast<int64_t>(chain.size()) <= n_ops) {
      chain.push_back(o);
      o = run.ops[o].parent;
    }
    int32_t above = (o >= 0 && o < n_ops && g.op_node[o] != kUnresolved) ? g.op_node[o] : -1;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const Op& x = run.ops[*it];
      if (above == -1 && (!x.inputs.empty() || !x.outputs.empty())) above = static_cast<int32_t>(*it);
      g.op_node[*it] = above;  // an op id for now; renumbered below
    }
  }
  std::vector<int32_t> node_index(n_ops, -1);
  for (int64_t op = 0; op < n_ops; ++op)
    if (g.op_node[op] == op) {
      node_index[op] = static_cast<int32_t>(g.node_op.size());
      g.node_op.push_back(op);
    }
  for (auto& v : g.op_node)
    if (v >= 0) v = node_index[v];
  const int32_t n = g.num_nodes();
  g.reads_graph_input.assign(n, 0);

  // Replay reads and writes in execution order: a read sees the latest write.
  // What a node writes is what its own op returns; a nested op's output
  // (an allocation, a view of an input, an intermediate) becomes a value of
  // the node only if another node reads it.
  constexpr int32_t kNoWrite = -1;
  auto nested = [](int32_t node) { return -2 - node; };  // pending nested write
  std::vector<int32_t> current(n_tensors, kNoWrite);
  std::vector<std::pair<int32_t, int32_t>> writes, reads;  // (node, value)
  auto new_value = [&](int64_t t, int32_t node) {
    current[t] = static_cast<int32_t>(g.values.size());
    writes.emplace_back(node, current[t]);
    g.values.push_back({t, node});
    return current[t];
  };
  for (int64_t op = 0; op < n_ops; ++op) {
    const int32_t node = g.op_node[op];
    if (node < 0) continue;
    for (int64_t t : run.ops[op].inputs) {
      if (t < 0 || t >= n_tensors) continue;
      int32_t v = current[t];
      if (v == kNoWrite) {
        g.reads_graph_input[node] = 1;
        continue;
      }
      if (v < kNoWrite) {
        const int32_t writer = -2 - v;
        if (writer == node) continue;
        v = new_value(t, writer);
      }
      if (g.values[v].producer < node)
        reads.emplace_back(node, v);
      else if (g.values[v].producer > node)
        ++g.backward_reads;  // written by a node that started later: no forward edge exists
    }
    const bool top = g.node_op[node] == op;
    for (int64_t t : run.ops[op].outputs) {
      if (t < 0 || t >= n_tensors) continue;
      const int32_t v = current[t];
      if (v >= 0 && g.values[v].producer == node) continue;  // nested op and its parent list the same tensor
      if (top)
        new_value(t, node);
      else
        current[t] = nested(node);
    }
  }

  const int32_t n_values = static_cast<int32_t>(g.values.size());
  std::vector<int32_t> marks(std::max(n, n_values), -1);
  g.writes = Group(n, writes, marks);
  std::fill(marks.begin(), marks.end(), -1);
  g.reads = Group(n, reads, marks);

  std::vector<std::pair<int32_t, int32_t>> edges;
  edges.reserve(g.reads.adj.size());
  for (int32_t v = 0; v < n; ++v)
    for (const int32_t* r = g.reads.from(v); r != g.reads.to(v); ++r) edges.emplace_back(v, g.values[*r].producer);
  std::fill(marks.begin(), marks.end(), -1);
  g.pred = Group(n, edges, marks);
  for (auto& e : edges) std::swap(e.first, e.second);
  std::fill(marks.begin(), marks.end(), -1);
  g.succ = Group(n, edges, marks);
  return g;
}

}  // namespace magneton::analysis
