// BufferPool: bounded, reuses buffers, refuses rather than blocks.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>

#include "capture/cupti/buffer_pool.h"

namespace magneton::capture {
namespace {

TEST(BufferPool, RefusesBeyondTheBoundAndReuses) {
  BufferPool pool(1024, 2);
  uint8_t* a = pool.Acquire();
  uint8_t* b = pool.Acquire();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 8, 0u);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.refused(), 1);
  EXPECT_EQ(pool.outstanding(), 2u);
  pool.Release(a);
  EXPECT_EQ(pool.Acquire(), a);
  EXPECT_EQ(pool.allocated(), 2u);
  pool.Release(a);
  pool.Release(b);
  EXPECT_EQ(pool.outstanding(), 0u);
}

TEST(BufferPool, FreesABufferItDidNotHandOut) {
  BufferPool pool(64, 1);
  // Left with CUPTI by an earlier tracer; Release must free it, not pool it.
  auto* stray = static_cast<uint8_t*>(std::aligned_alloc(8, 64));
  pool.Release(stray);
  EXPECT_EQ(pool.allocated(), 0u);
  EXPECT_EQ(pool.outstanding(), 0u);
}

}  // namespace
}  // namespace magneton::capture
