// One call of a captured operator, as the replay makes it: private copies of
// the arguments it writes, the dispatcher call, the device's synchronization
// and the default generator's state (replay.h).
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture/torch/replay.h"

namespace magneton::capture {

// Copies of a call's tensors, sharing copies where the originals were one
// tensor (add_(x, x) stays aliased). Each copy keeps the original's sizes and
// strides (over a fresh span of storage), dtype and device.
class Cloner {
 public:
  at::Tensor Tensor(const at::Tensor& t);
  c10::IValue Value(const c10::IValue& v);

 private:
  std::unordered_map<const c10::TensorImpl*, at::Tensor> done_;
};

// Arguments for one more call: the written ones copied, the rest shared.
std::vector<c10::IValue> FreshArgs(const ReplayEntry& e);

// The tensors a call produced: its outputs, or for in-place ops that return
// nothing (_foreach_add_) the arguments it wrote.
std::vector<at::Tensor> OutputTensors(const std::vector<c10::IValue>& outs, const std::vector<c10::IValue>& args,
                                      const std::vector<bool>& writes);
// One fingerprint per tensor; an empty one where it cannot be computed.
std::vector<Fingerprint> Fingerprints(const std::vector<at::Tensor>& ts, const FingerprintOptions& o);

c10::OperatorHandle FindOp(const ReplayEntry& e);  // throws when the schema is not registered
// `n` calls with `args` (written arguments already private to this loop).
void Calls(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args, int64_t n);
void Synchronize(const c10::Device& d);  // waits for the device's queued work; never throws

// "cpu" or "cuda:0": the key of a device's idle power.
std::string DeviceLabel(const c10::Device& d);
// A CUDA ordinal, or kHostDevice for the CPU (ReplayMeasurement::device).
int32_t DeviceOrdinal(const c10::Device& d);

// Puts a device's default generator back as it was at Save: random ops draw
// from it in every call, and the workload's random stream must not move.
class GeneratorGuard {
 public:
  GeneratorGuard() = default;
  ~GeneratorGuard();  // restores; never throws (a throwing destructor ends the host program)
  GeneratorGuard(const GeneratorGuard&) = delete;
  GeneratorGuard& operator=(const GeneratorGuard&) = delete;

  // Throws what the generator throws (a device with no default generator);
  // nothing is restored then.
  void Save(const c10::Device& d);
  void Set(const at::Tensor& state);  // after Save

 private:
  std::optional<at::Generator> gen_;
  at::Tensor saved_;
};

// The default generator's state of `d`, for a random op's check call;
// undefined when the device has none.
at::Tensor GeneratorState(const c10::Device& d);

}  // namespace magneton::capture
