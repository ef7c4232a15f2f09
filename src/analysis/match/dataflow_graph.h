// The dataflow graph of one run, as matching sees it (docs/matching.md,
// "Granularity"): operators are nodes, the values they pass are edges.
//
// Nodes are the outermost operators that carry tensors: a top-level op
// (parent == -1) with inputs or outputs, or, under a tensor-less op such as a
// user scope, its outermost descendants that have tensors. Everything nested
// inside a node belongs to it: an edge runs from the node whose subtree wrote
// a value to every other node whose subtree reads it.
//
// Nodes are numbered in op id order (execution order), which is topological:
// a read resolves to the latest write before it, so every edge goes forward.
#pragma once

#include <cstdint>
#include <vector>

#include "core/run.h"

namespace magneton::analysis {

// A compressed adjacency list: the neighbors of v are adj[begin[v] .. begin[v+1]).
struct Adjacency {
  std::vector<int32_t> begin;
  std::vector<int32_t> adj;
  int32_t size(int32_t v) const { return begin[v + 1] - begin[v]; }
  const int32_t* from(int32_t v) const { return adj.data() + begin[v]; }
  const int32_t* to(int32_t v) const { return adj.data() + begin[v + 1]; }
};

struct DataflowGraph {
  std::vector<int64_t> node_op;  // op id of each node, in execution order
  std::vector<int32_t> op_node;  // per op id: the node it belongs to, or -1

  // One value per write of a tensor by a node.
  struct Value {
    int64_t tensor = 0;
    int32_t producer = 0;  // node
  };
  std::vector<Value> values;
  Adjacency writes;  // node -> values it wrote
  Adjacency reads;   // node -> values written by other nodes that it read
  Adjacency succ;    // node -> nodes reading its values (deduplicated)
  Adjacency pred;    // node -> nodes whose values it read (deduplicated)

  // Nodes that read a tensor no node wrote: a parameter or a program input.
  std::vector<uint8_t> reads_graph_input;
  int64_t backward_reads = 0;  // reads of a node that started later (cross-thread): dropped

  int32_t num_nodes() const { return static_cast<int32_t>(node_op.size()); }
};

DataflowGraph BuildDataflowGraph(const Run& run);

}  // namespace magneton::analysis
