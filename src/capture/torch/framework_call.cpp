#include "capture/torch/framework_call.h"

namespace magneton::capture {

FrameworkCall::FrameworkCall(std::string name, const std::vector<at::Tensor>& inputs)
    : name_(std::move(name)), fn_(std::make_unique<at::RecordFunction>(at::RecordScope::FUNCTION)) {
  if (!fn_->isActive()) {
    fn_.reset();
    return;
  }
  inputs_.assign(inputs.begin(), inputs.end());
  if (fn_->needsInputs())
    fn_->before(name_.c_str(), c10::ArrayRef<const c10::IValue>(inputs_.data(), inputs_.size()));
  else
    fn_->before(name_.c_str());
}

FrameworkCall::~FrameworkCall() { End({}); }

void FrameworkCall::End(const std::vector<at::Tensor>& outputs) {
  if (!fn_) return;
  if (fn_->needsOutputs()) fn_->setOutputs(std::vector<c10::IValue>(outputs.begin(), outputs.end()));
  fn_->end();
  fn_.reset();
  inputs_.clear();
}

}  // namespace magneton::capture
