// Pairs NVTX start and end markers into Range rows.
//
// CUPTI reports every NVTX range as two marker records sharing an id: START
// (with the name) and END. Push/pop ranges nest per thread; start/end ranges
// are process-wide and have no parent. The store wants rows with dense ids in
// the order they are written, and a child needs its parent's id, so a range
// is held until its outermost enclosing range closes; then that whole subtree
// gets ids in post-order (children first) and is released at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/run.h"

namespace magneton::capture {

class RangeBuilder {
 public:
  explicit RangeBuilder(int64_t first_id = 0);
  ~RangeBuilder();
  RangeBuilder(const RangeBuilder&) = delete;
  RangeBuilder& operator=(const RangeBuilder&) = delete;

  // `nests`: a push/pop range (nests inside the thread's open push/pop range).
  void Start(uint32_t marker, std::string name, std::string domain, int64_t thread, int64_t t_ns, bool nests);
  void End(uint32_t marker, int64_t t_ns);
  // An instantaneous marker (nvtxMark): a zero-length range.
  void Instant(std::string name, std::string domain, int64_t thread, int64_t t_ns, bool nests);
  // Ends every open range at `t_ns` (the recording stopped inside them).
  void CloseAll(int64_t t_ns);

  // Ranges ready to write, in id order; clears the list.
  std::vector<Range> TakeReady();

  int64_t open() const { return static_cast<int64_t>(open_.size()); }
  int64_t unmatched_ends() const { return unmatched_ends_; }
  int64_t closed_at_stop() const { return closed_at_stop_; }

 private:
  struct Node;
  void Release(std::unique_ptr<Node> node);
  void Emit(Node& node, int64_t parent_id);

  std::unordered_map<uint32_t, std::unique_ptr<Node>> open_;          // by marker id
  std::unordered_map<int64_t, std::vector<uint32_t>> thread_stacks_;  // open push/pop markers per thread
  std::unordered_map<uint32_t, int64_t> released_with_open_children_; // marker -> range id
  std::vector<Range> ready_;
  int64_t next_id_ = 0;
  int64_t unmatched_ends_ = 0;
  int64_t closed_at_stop_ = 0;
};

}  // namespace magneton::capture
