#include "capture/torch/dataflow.h"

#include <algorithm>

namespace magneton::capture {

int64_t Dataflow::Find(const StorageValues& s, const ValueKey& key) {
  for (auto it = s.values.rbegin(); it != s.values.rend(); ++it)
    if (it->second == key) return it->first;
  return kNone;
}

int64_t Dataflow::NewRow(const ValueKey& key, int64_t producer) {
  Tensor t;
  t.id = rows();
  t.storage = key.storage;
  t.offset = key.offset;
  t.version = key.version;
  t.shape = key.shape;
  t.strides = key.strides;
  t.dtype = key.dtype;
  t.device = key.device;
  t.memory = key.memory;
  rows_.push_back(std::move(t));
  if (producer == kNone) ++graph_inputs_;
  const int64_t row = rows() - 1;
  // This row now stands for its value: replace an older row of the same value.
  auto& values = storages_[key.storage].values;
  auto same = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.second == key; });
  if (same != values.end()) values.erase(same);
  if (values.size() >= kMaxValuesPerStorage) values.erase(values.begin());
  values.emplace_back(row, key);
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

std::vector<Tensor> Dataflow::TakeRows(int64_t up_to) {
  std::vector<Tensor> out;
  while (taken_ < up_to && !rows_.empty()) {
    out.push_back(std::move(rows_.front()));
    rows_.pop_front();
    ++taken_;
  }
  return out;
}

}  // namespace magneton::capture
