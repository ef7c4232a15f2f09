// Dataflow between recorded operators: which op produced the value an op
// reads. A tensor value is identified by where it lives and what it looks like
// at that moment: (storage, offset, shape, strides, dtype, device, version).
// Views share the storage and differ in offset/shape/strides; in-place ops bump
// the version counter, so each write is a new value. An input maps to the
// latest producer of that exact value; values never produced by a recorded op
// (parameters, user inputs) become graph inputs on first sight.
//
// A value that matches nothing produced although a recorded op wrote its
// storage (a view taken before an in-place write, a buffer an op allocated
// without a recorded op and wrote through a view) is read from memory that
// op wrote: it becomes an extra output of the storage's last writer, an
// "aliased" input, counted separately from exact matches.
//
// Torch-free on purpose: the extension fills ValueKey from at::Tensor, and
// the same logic serves any framework that exposes storage identity.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
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

// Owns the Tensor rows of a recording. Not thread-safe: the recorder
// serializes calls under its lock, which also fixes the program order that
// "latest producer" refers to.
class Dataflow {
 public:
  struct InputRow {
    int64_t row = kNone;
    int64_t aliased_writer = kNone;  // set when the row is a new output of this op
    bool graph_input = false;        // a new row no recorded op produced
  };
  // The tensor row an op reads: the latest producer's output of this exact
  // value, else an aliased output of the storage's last writer, else a new
  // graph-input row.
  InputRow Input(const ValueKey& key);
  // A new tensor row produced by op `producer`; later readers of this value
  // map to it. Every output is a new row, even when a nested op produced the
  // same value just before (the outer op becomes the latest producer).
  // `writes`: the op wrote the storage (an allocation or an in-place write),
  // as opposed to returning a view of an input.
  int64_t Output(const ValueKey& key, int64_t producer, bool writes);

  // The row that currently stands for this value, or kNone.
  int64_t Latest(const ValueKey& key) const;
  int64_t Producer(int64_t tensor) const { return producer_[tensor]; }
  // The storage was freed: no later op can read its values, so its lookup
  // state goes (the rows stay). Keeps memory bounded by live storages.
  void ForgetStorage(int64_t storage) { storages_.erase(storage); }
  size_t live_storages() const { return storages_.size(); }

  std::vector<Tensor>& tensors() { return tensors_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  int64_t aliased_inputs() const { return aliased_inputs_; }

 private:
  // Per storage: the latest row of each distinct value seen on it (views of
  // one storage are few; the oldest go beyond kMaxValuesPerStorage) and the
  // op that last wrote it.
  struct StorageValues {
    std::vector<int64_t> rows;
    int64_t last_writer = kNone;
  };
  static constexpr size_t kMaxValuesPerStorage = 64;

  int64_t NewRow(const ValueKey& key, int64_t producer);
  bool Same(const ValueKey& key, int64_t row) const;
  int64_t Find(const StorageValues& s, const ValueKey& key) const;

  std::vector<Tensor> tensors_;
  std::vector<int64_t> producer_;  // per tensor row: op id or kNone
  std::unordered_map<int64_t, StorageValues> storages_;
  int64_t aliased_inputs_ = 0;
};

}  // namespace magneton::capture
