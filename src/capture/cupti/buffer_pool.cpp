#include "capture/cupti/buffer_pool.h"

#include <cstdlib>

namespace magneton::capture {

BufferPool::~BufferPool() {
  std::lock_guard<std::mutex> lock(mu_);
  // Buffers still out belong to CUPTI until it returns them; Release frees those then.
  for (uint8_t* b : free_) std::free(b);
}

uint8_t* BufferPool::Acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!free_.empty()) {
    uint8_t* b = free_.back();
    free_.pop_back();
    ++outstanding_;
    return b;
  }
  if (all_.size() >= max_) {
    ++refused_;
    return nullptr;
  }
  auto* b = static_cast<uint8_t*>(std::aligned_alloc(8, (bytes_ + 7) & ~size_t{7}));
  if (!b) {
    ++refused_;
    return nullptr;
  }
  all_.insert(b);
  ++outstanding_;
  return b;
}

void BufferPool::Release(uint8_t* buffer) {
  if (!buffer) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (!all_.count(buffer)) {
    std::free(buffer);
    return;
  }
  free_.push_back(buffer);
  --outstanding_;
}

size_t BufferPool::outstanding() const {
  std::lock_guard<std::mutex> lock(mu_);
  return outstanding_;
}

size_t BufferPool::allocated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return all_.size();
}

int64_t BufferPool::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}

}  // namespace magneton::capture
