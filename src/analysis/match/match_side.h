// What matching needs to know about one run's graph beyond its edges: which
// nodes lead to an output, which carry data, and the post-dominator tree
// (docs/matching.md, "Components, flow and the post-dominator tree").
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/match/dataflow_graph.h"
#include "analysis/match/dominators.h"
#include "core/run.h"

namespace magneton::analysis {

struct MatchSide {
  const Run* run = nullptr;
  DataflowGraph graph;

  // Main outputs: per weakly independent component, the dead end (a node
  // whose values nobody reads) at the end of the longest path, and every dead
  // end that updates state in place (an optimizer's parameter update). Other
  // dead ends that share ancestry with a component (a KV cache returned but
  // not read, a logged statistic) are side outputs.
  std::vector<int32_t> main_outputs;
  std::vector<uint8_t> core;  // the node reaches a main output
  // The node depends on a graph input (a parameter or program input), as
  // opposed to constants built from shapes alone (arange, ones, masks).
  std::vector<uint8_t> flow;
  // Post-dominators over core nodes; the virtual root joins the main outputs.
  DominatorTree pdom;
  // Per value: position of the last core node that reads it, or -1.
  std::vector<int32_t> last_core_read;

  int32_t size() const { return graph.num_nodes(); }
  bool IsRootIn(int32_t v, int32_t begin) const;  // no predecessor at or after `begin`
  // How many call-stack frames two nodes share, counted from the outermost:
  // frames match on function and file, and on line too unless one of them is
  // the innermost frame (where the op itself was called). -1 when either
  // node has no recorded stack.
  int CommonFrames(int32_t x, int32_t y) const;
};

MatchSide AnalyzeSide(const Run& run);

}  // namespace magneton::analysis
