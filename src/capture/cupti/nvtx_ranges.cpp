#include "capture/cupti/nvtx_ranges.h"

#include <algorithm>

namespace magneton::capture {

struct RangeBuilder::Node {
  Range range;
  uint32_t marker = 0;
  uint32_t parent_marker = 0;  // 0: none
  bool has_parent = false;
  int open_children = 0;
  std::vector<std::unique_ptr<Node>> children;  // closed, in close order
};

RangeBuilder::RangeBuilder(int64_t first_id) : next_id_(first_id) {}
RangeBuilder::~RangeBuilder() = default;

void RangeBuilder::Start(uint32_t marker, std::string name, std::string domain, int64_t thread, int64_t t_ns,
                         bool nests) {
  auto node = std::make_unique<Node>();
  node->marker = marker;
  node->range.name = std::move(name);
  node->range.domain = std::move(domain);
  node->range.thread = thread;
  node->range.start_ns = t_ns;
  node->range.end_ns = t_ns;
  if (nests) {
    auto& stack = thread_stacks_[thread];
    if (!stack.empty()) {
      node->parent_marker = stack.back();
      node->has_parent = true;
      open_[stack.back()]->open_children++;
    }
    stack.push_back(marker);
  }
  open_[marker] = std::move(node);
}

void RangeBuilder::End(uint32_t marker, int64_t t_ns) {
  auto it = open_.find(marker);
  if (it == open_.end()) {
    ++unmatched_ends_;  // its start came before recording began, or was dropped
    return;
  }
  std::unique_ptr<Node> node = std::move(it->second);
  open_.erase(it);
  node->range.end_ns = std::max(t_ns, node->range.start_ns);
  auto st = thread_stacks_.find(node->range.thread);
  if (st != thread_stacks_.end()) {
    auto& v = st->second;
    // Normally the top; an out-of-order pop is tolerated rather than corrupting the stack.
    auto pos = std::find(v.rbegin(), v.rend(), marker);
    if (pos != v.rend()) v.erase(std::next(pos).base());
    if (v.empty()) thread_stacks_.erase(st);
  }
  Release(std::move(node));
}

void RangeBuilder::Instant(std::string name, std::string domain, int64_t thread, int64_t t_ns, bool nests) {
  auto node = std::make_unique<Node>();
  node->range.name = std::move(name);
  node->range.domain = std::move(domain);
  node->range.thread = thread;
  node->range.start_ns = node->range.end_ns = t_ns;
  if (nests) {
    auto st = thread_stacks_.find(thread);
    if (st != thread_stacks_.end() && !st->second.empty()) {
      node->parent_marker = st->second.back();
      node->has_parent = true;
      open_[node->parent_marker]->open_children++;
    }
  }
  Release(std::move(node));
}

void RangeBuilder::Release(std::unique_ptr<Node> node) {
  if (node->has_parent) {
    auto parent = open_.find(node->parent_marker);
    if (parent != open_.end()) {
      parent->second->open_children--;
      parent->second->children.push_back(std::move(node));
      return;
    }
    // The parent closed first (out-of-order records): it was already written.
    auto done = released_with_open_children_.find(node->parent_marker);
    int64_t parent_id = done != released_with_open_children_.end() ? done->second : kNone;
    Emit(*node, parent_id);
    return;
  }
  Emit(*node, kNone);
}

// Post-order: every child gets an id before its parent, and ready_ stays in id order.
void RangeBuilder::Emit(Node& node, int64_t parent_id) {
  // The node's own id is the one after all of its descendants.
  std::vector<Node*> order;
  std::vector<std::pair<Node*, size_t>> walk{{&node, 0}};
  while (!walk.empty()) {
    auto& [n, i] = walk.back();
    if (i < n->children.size()) {
      Node* c = n->children[i++].get();
      walk.push_back({c, 0});
    } else {
      order.push_back(n);
      walk.pop_back();
    }
  }
  for (Node* n : order) n->range.id = next_id_++;
  for (Node* n : order) {
    for (auto& c : n->children) c->range.parent = n->range.id;
    if (n->open_children > 0) released_with_open_children_[n->marker] = n->range.id;
  }
  node.range.parent = parent_id;
  for (Node* n : order) ready_.push_back(std::move(n->range));
}

void RangeBuilder::CloseAll(int64_t t_ns) {
  // Innermost first, so parents still exist when their children close.
  std::vector<std::pair<int64_t, uint32_t>> by_start;
  for (auto& [marker, node] : open_) by_start.push_back({node->range.start_ns, marker});
  std::sort(by_start.begin(), by_start.end(), std::greater<>());
  for (auto& [start, marker] : by_start) {
    ++closed_at_stop_;
    End(marker, t_ns);
  }
}

std::vector<Range> RangeBuilder::TakeReady() {
  std::vector<Range> out;
  out.swap(ready_);
  return out;
}

}  // namespace magneton::capture
