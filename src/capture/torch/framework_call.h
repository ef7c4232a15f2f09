// A call a framework makes from Python that no ATen operator covers, recorded
// as an operator with its tensors: a torch.compile graph's call (Inductor's
// CompiledFxGraph.__call__). Its generated kernels are no operators, so
// without this its outputs would have no fingerprints and match nothing on
// the eager side (on a GPU only the graph's extern GEMMs were recorded, and
// an eager/compiled pair matched no region). It is a RecordFunction of its
// own, so the recorder's operator callbacks see it like any operator and the
// operators it runs nest inside it. python/magneton/compiled_calls.py opens
// and closes it around the graph's call, in the recording pass only.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/record_function.h>

#include <memory>
#include <string>
#include <vector>

namespace magneton::capture {

class FrameworkCall {
 public:
  // Opens the call with its inputs; a no-op where no operator callback is
  // active (nothing is recording operators).
  FrameworkCall(std::string name, const std::vector<at::Tensor>& inputs);
  ~FrameworkCall();  // ends it without outputs when End was not called (an exception)
  FrameworkCall(const FrameworkCall&) = delete;
  FrameworkCall& operator=(const FrameworkCall&) = delete;

  // Closes the call with its outputs; once.
  void End(const std::vector<at::Tensor>& outputs);

 private:
  std::string name_;                 // the RecordFunction points at it
  std::vector<c10::IValue> inputs_;  // ...and at these, until it ends
  std::unique_ptr<at::RecordFunction> fn_;
};

}  // namespace magneton::capture
