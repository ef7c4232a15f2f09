// The activity buffers handed to CUPTI. Bounded: when every buffer is
// waiting to be processed, CUPTI gets none and drops records (it counts
// them) instead of the host program waiting for the tracer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace magneton::capture {

class BufferPool {
 public:
  BufferPool(size_t buffer_bytes, size_t max_buffers) : bytes_(buffer_bytes), max_(max_buffers) {}
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A free buffer, 8-byte aligned, or nullptr when all max_buffers are out.
  uint8_t* Acquire();
  // Takes a buffer back. One this pool did not hand out (left with CUPTI by
  // an earlier tracer) is freed.
  void Release(uint8_t* buffer);

  size_t buffer_bytes() const { return bytes_; }
  size_t outstanding() const;
  size_t allocated() const;
  int64_t refused() const;  // Acquire calls that found no buffer

 private:
  const size_t bytes_, max_;
  mutable std::mutex mu_;
  std::vector<uint8_t*> free_;
  std::unordered_set<uint8_t*> all_;
  size_t outstanding_ = 0;
  int64_t refused_ = 0;
};

}  // namespace magneton::capture
