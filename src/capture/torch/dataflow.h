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
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/run.h"

namespace magneton::capture {

struct ValueKey {
  int64_t storage = 0;  // storage identity (allocation address)
  int64_t offset = 0;   // elements
  int64_t version = 0;  // version counter; 0 where the framework has none (inference tensors)
  int32_t device = kHostDevice;
  std::string_view memory;  // a kMemory* constant, or empty
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;

  bool operator==(const ValueKey&) const = default;
};

// Owns the Tensor rows of a recording until they are taken for the run
// store (TakeRows): a long recording keeps only the rows not yet written and,
// per live storage, the keys of its latest values, so memory is bounded by
// live tensors, not by history. Not thread-safe: the recorder serializes
// calls under its lock, which also fixes the program order that "latest
// producer" refers to.
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
  // The storage was freed: no later op can read its values, so its lookup
  // state goes. Keeps memory bounded by live storages.
  void ForgetStorage(int64_t storage) { storages_.erase(storage); }
  size_t live_storages() const { return storages_.size(); }

  // A row not yet taken (its fingerprint is set through it).
  Tensor& row(int64_t id) { return rows_[static_cast<size_t>(id - taken_)]; }
  int64_t rows() const { return taken_ + static_cast<int64_t>(rows_.size()); }  // rows made so far
  int64_t taken() const { return taken_; }
  // Hands over rows [taken(), up_to) for writing; they leave memory.
  std::vector<Tensor> TakeRows(int64_t up_to);

  int64_t aliased_inputs() const { return aliased_inputs_; }
  int64_t graph_inputs() const { return graph_inputs_; }

 private:
  // Per storage: the latest row of each distinct value seen on it, with its
  // key (views of one storage are few; the oldest go beyond
  // kMaxValuesPerStorage), and the op that last wrote it.
  struct StorageValues {
    std::vector<std::pair<int64_t, ValueKey>> values;
    int64_t last_writer = kNone;
  };
  static constexpr size_t kMaxValuesPerStorage = 64;

  int64_t NewRow(const ValueKey& key, int64_t producer);
  static int64_t Find(const StorageValues& s, const ValueKey& key);

  std::deque<Tensor> rows_;  // rows [taken_, rows())
  int64_t taken_ = 0;
  std::unordered_map<int64_t, StorageValues> storages_;
  int64_t aliased_inputs_ = 0, graph_inputs_ = 0;
};

}  // namespace magneton::capture
