// The RecordFunction callbacks that watch operators, as the recorder and the
// replay capture install them. Inputs and outputs are asked for in the
// FUNCTION scope only: for an autograd node (BACKWARD_FUNCTION) that makes
// Node::operator() copy its inputs for the callback, and AccumulateGrad,
// seeing the extra reference, clones each gradient instead of taking it (a
// copy per parameter per step that the program without the recorder does
// not make). A node's tensors are seen anyway, by the operators inside it.
#pragma once

#include <ATen/record_function.h>

namespace magneton::capture {

struct OpObserver {
  at::CallbackHandle functions = 0;  // operators: with inputs and outputs
  at::CallbackHandle nodes = 0;      // autograd nodes: name and sequence number only

  bool installed() const { return functions != 0; }
};

inline OpObserver AddOpObserver(at::RecordFunctionCallback::StartCallback start,
                                at::RecordFunctionCallback::EndCallback end) {
  OpObserver o;
  at::RecordFunctionCallback ops(start, end);
  ops.needsInputs(true).needsOutputs(true).scopes({at::RecordScope::FUNCTION});
  o.functions = at::addGlobalCallback(ops);
  at::RecordFunctionCallback nodes(start, end);
  nodes.scopes({at::RecordScope::BACKWARD_FUNCTION});
  o.nodes = at::addGlobalCallback(nodes);
  return o;
}

inline void RemoveOpObserver(OpObserver& o) {
  if (o.functions) at::removeCallback(o.functions);
  if (o.nodes) at::removeCallback(o.nodes);
  o = {};
}

}  // namespace magneton::capture
