// Dataflow between recorded operators: which op produced the value an op
// reads. A tensor value is identified by where it lives and what it looks like
// at that moment: (storage, offset, shape, strides, dtype, device, version).
// Views share the storage and differ in offset/shape/strides; in-place ops bump
// the version counter, so each write is a new value. An input maps to the
// latest producer of that exact value; values never produced by a recorded op
// (parameters, user inputs) become graph inputs on first sight.
//
// Torch-free on purpose: the extension fills ValueKey from at::Tensor, and
// the same logic serves any framework that exposes storage identity.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/run.h"

namespace magneton::capture {

struct ValueKey {
  int64_t storage = 0;  // storage identity (allocation address)
  int64_t offset = 0;   // elements
  int64_t version = 0;  // version counter; 0 where the framework has none (inference tensors)
  int32_t device = kHostDevice;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;

  bool operator==(const ValueKey&) const = default;
};

struct ValueKeyHash {
  size_t operator()(const ValueKey& k) const noexcept;
};

// Owns the Tensor rows of a recording. Not thread-safe: the recorder
// serializes calls under its lock, which also fixes the program order that
// "latest producer" refers to.
class Dataflow {
 public:
  // The tensor row an op reads: the latest producer's output of this exact
  // value, or a new graph-input row.
  int64_t Input(const ValueKey& key);
  // A new tensor row written by op `producer`; later readers of this value map
  // to it. Every output is a new row, even when a nested op produced the same
  // value just before (the outer op becomes the latest producer).
  int64_t Output(const ValueKey& key, int64_t producer);

  // The row that currently stands for this value, or kNone.
  int64_t Latest(const ValueKey& key) const;
  int64_t Producer(int64_t tensor) const { return producer_[tensor]; }
  // True when `storage` was written by a recorded op before: an input on it
  // that matches no produced value is a missed edge, not a graph input.
  bool StorageWritten(int64_t storage) const { return written_storages_.count(storage) != 0; }

  std::vector<Tensor>& tensors() { return tensors_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  int64_t missed_inputs() const { return missed_inputs_; }

 private:
  int64_t NewRow(const ValueKey& key, int64_t producer);

  std::vector<Tensor> tensors_;
  std::vector<int64_t> producer_;  // per tensor row: op id or kNone
  std::unordered_map<ValueKey, int64_t, ValueKeyHash> latest_;
  std::unordered_set<int64_t> written_storages_;
  int64_t missed_inputs_ = 0;
};

}  // namespace magneton::capture
