#include "capture/torch/replay_call.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <mutex>

#include "capture/torch/aten_values.h"

namespace magneton::capture {

at::Tensor Cloner::Tensor(const at::Tensor& t) {
  if (!t.defined()) return t;
  auto it = done_.find(t.unsafeGetTensorImpl());
  if (it != done_.end()) return it->second;
  at::Tensor src = t.detach();
  at::Tensor out;
  if (src.numel() == 0 || !src.has_storage()) {
    out = src.clone();
  } else {
    int64_t span = 1;
    for (int64_t d = 0; d < src.dim(); ++d) span += (src.size(d) - 1) * src.stride(d);
    at::Tensor flat = at::empty({span}, src.options());
    flat.copy_(src.as_strided({span}, {1}, src.storage_offset()));
    out = flat.as_strided(src.sizes(), src.strides(), 0);
  }
  if (t.unsafeGetTensorImpl()->is_wrapped_number()) out.unsafeGetTensorImpl()->set_wrapped_number(true);
  done_.emplace(t.unsafeGetTensorImpl(), out);
  return out;
}

c10::IValue Cloner::Value(const c10::IValue& v) {
  if (v.isTensor()) return Tensor(v.toTensor());
  if (v.isList()) {
    auto list = v.toList();
    c10::impl::GenericList out(list.elementType());
    out.reserve(list.size());
    for (size_t k = 0; k < list.size(); ++k) out.push_back(Value(list.get(k)));
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> elems;
    for (const auto& e : v.toTupleRef().elements()) elems.push_back(Value(e));
    return c10::ivalue::Tuple::create(std::move(elems));
  }
  return v;
}

std::vector<c10::IValue> FreshArgs(const ReplayEntry& e) {
  c10::NoGradGuard no_grad;
  at::RecordFunctionGuard no_record(false);
  Cloner cloner;
  std::vector<c10::IValue> args = e.args;
  for (size_t i = 0; i < args.size(); ++i)
    if (i < e.writes.size() && e.writes[i]) args[i] = cloner.Value(args[i]);
  return args;
}

std::vector<at::Tensor> OutputTensors(const std::vector<c10::IValue>& outs, const std::vector<c10::IValue>& args,
                                      const std::vector<bool>& writes) {
  std::vector<at::Tensor> ts;
  for (const auto& v : outs) ForEachTensor(v, [&](const at::Tensor& t) { ts.push_back(t); });
  if (ts.empty())
    for (size_t i = 0; i < args.size(); ++i)
      if (i < writes.size() && writes[i]) ForEachTensor(args[i], [&](const at::Tensor& t) { ts.push_back(t); });
  return ts;
}

std::vector<Fingerprint> Fingerprints(const std::vector<at::Tensor>& ts, const FingerprintOptions& o) {
  std::vector<Fingerprint> fps;
  for (const auto& t : ts) {
    auto fp = ComputeFingerprint(t, o);
    fps.push_back(fp.ok() ? std::move(fp.value()) : Fingerprint{});
  }
  return fps;
}

c10::OperatorHandle FindOp(const ReplayEntry& e) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(e.name.c_str(), e.overload.c_str());
}

void Calls(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args, int64_t n) {
  c10::NoGradGuard no_grad;
  at::RecordFunctionGuard no_record(false);
  for (int64_t i = 0; i < n; ++i) {
    torch::jit::Stack stack(args.begin(), args.end());
    op.callBoxed(&stack);
  }
}

void Synchronize(const c10::Device& d) {
  if (d.is_cpu()) return;
  try {
    c10::impl::getDeviceGuardImpl(d.type())->synchronizeDevice(d.has_index() ? d.index() : 0);
  } catch (const std::exception&) {
  }
}

std::string DeviceLabel(const c10::Device& d) { return d.is_cpu() ? "cpu" : d.str(); }

int32_t DeviceOrdinal(const c10::Device& d) { return d.is_cpu() ? kHostDevice : (d.has_index() ? d.index() : 0); }

GeneratorGuard::~GeneratorGuard() {
  if (!gen_) return;
  try {
    std::lock_guard<std::mutex> lock(gen_->mutex());
    gen_->set_state(saved_);
  } catch (...) {
  }
}

void GeneratorGuard::Save(const c10::Device& d) {
  at::Generator gen = at::globalContext().defaultGenerator(d);
  std::lock_guard<std::mutex> lock(gen.mutex());
  saved_ = gen.get_state();
  gen_ = gen;
}

void GeneratorGuard::Set(const at::Tensor& state) {
  std::lock_guard<std::mutex> lock(gen_->mutex());
  gen_->set_state(state);
}

at::Tensor GeneratorState(const c10::Device& d) {
  try {
    auto gen = at::globalContext().defaultGenerator(d);
    std::lock_guard<std::mutex> lock(gen.mutex());
    return gen.get_state();
  } catch (const std::exception&) {
    return {};  // no default generator for this device: the check compares shapes only
  }
}

}  // namespace magneton::capture
