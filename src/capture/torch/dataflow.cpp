#include "capture/torch/dataflow.h"

#include <algorithm>

namespace magneton::capture {

bool Dataflow::Same(const ValueKey& key, int64_t row) const {
  const Tensor& t = tensors_[row];
  return t.offset == key.offset && t.version == key.version && t.device == key.device && t.dtype == key.dtype &&
         t.shape == key.shape && t.strides == key.strides;
}

int64_t Dataflow::Find(const StorageValues& s, const ValueKey& key) const {
  for (auto it = s.rows.rbegin(); it != s.rows.rend(); ++it)
    if (Same(key, *it)) return *it;
  return kNone;
}

int64_t Dataflow::NewRow(const ValueKey& key, int64_t producer) {
  Tensor t;
  t.id = static_cast<int64_t>(tensors_.size());
  t.storage = key.storage;
  t.offset = key.offset;
  t.version = key.version;
  t.shape = key.shape;
  t.strides = key.strides;
  t.dtype = key.dtype;
  t.device = key.device;
  tensors_.push_back(std::move(t));
  producer_.push_back(producer);
  const int64_t row = tensors_.back().id;
  // This row now stands for its value: replace an older row of the same value.
  auto& rows = storages_[key.storage].rows;
  auto same = std::find_if(rows.begin(), rows.end(), [&](int64_t r) { return Same(key, r); });
  if (same != rows.end()) rows.erase(same);
  if (rows.size() >= kMaxValuesPerStorage) rows.erase(rows.begin());
  rows.push_back(row);
  return row;
}

Dataflow::InputRow Dataflow::Input(const ValueKey& key) {
  InputRow in;
  auto s = storages_.find(key.storage);
  if (s != storages_.end()) {
    in.row = Find(s->second, key);
    if (in.row != kNone) return in;
    if (s->second.last_writer != kNone) {
      ++aliased_inputs_;
      in.aliased_writer = s->second.last_writer;
      in.row = NewRow(key, in.aliased_writer);
      return in;
    }
  }
  in.graph_input = true;
  in.row = NewRow(key, kNone);
  return in;
}

int64_t Dataflow::Output(const ValueKey& key, int64_t producer, bool writes) {
  const int64_t row = NewRow(key, producer);
  if (writes) storages_[key.storage].last_writer = producer;
  return row;
}

int64_t Dataflow::Latest(const ValueKey& key) const {
  auto s = storages_.find(key.storage);
  return s == storages_.end() ? kNone : Find(s->second, key);
}

}  // namespace magneton::capture
