#include "capture/torch/dataflow.h"

namespace magneton::capture {

namespace {
inline void Mix(size_t& h, uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }
}  // namespace

size_t ValueKeyHash::operator()(const ValueKey& k) const noexcept {
  size_t h = std::hash<int64_t>()(k.storage);
  Mix(h, static_cast<uint64_t>(k.offset));
  Mix(h, static_cast<uint64_t>(k.version));
  Mix(h, static_cast<uint64_t>(k.device));
  for (auto d : k.shape) Mix(h, static_cast<uint64_t>(d));
  for (auto s : k.strides) Mix(h, static_cast<uint64_t>(s) * 31);
  return h;
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
  latest_[key] = tensors_.back().id;
  return tensors_.back().id;
}

Dataflow::InputRow Dataflow::Input(const ValueKey& key) {
  InputRow in;
  if (auto it = latest_.find(key); it != latest_.end()) {
    in.row = it->second;
    return in;
  }
  if (auto w = last_writer_.find(key.storage); w != last_writer_.end()) {
    ++aliased_inputs_;
    in.aliased_writer = w->second;
    in.row = NewRow(key, w->second);
    return in;
  }
  in.graph_input = true;
  in.row = NewRow(key, kNone);
  return in;
}

int64_t Dataflow::Output(const ValueKey& key, int64_t producer, bool writes) {
  if (writes) last_writer_[key.storage] = producer;
  return NewRow(key, producer);
}

int64_t Dataflow::Latest(const ValueKey& key) const {
  auto it = latest_.find(key);
  return it == latest_.end() ? kNone : it->second;
}

}  // namespace magneton::capture
