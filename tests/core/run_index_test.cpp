#include "core/run_index.h"

#include <gtest/gtest.h>

namespace magneton {
namespace {

Run Nested() {
  // 0 { 1 { 3 } 2 } 4; kernels of 3, 0 and 2; copies of 1 and 4.
  magneton::Run run;
  const int64_t parents[] = {kNone, 0, 0, 1, kNone};
  for (int64_t i = 0; i < 5; ++i) {
    Op op;
    op.id = i;
    op.parent = parents[i];
    run.ops.push_back(op);
  }
  for (int64_t op : {int64_t{3}, int64_t{0}, int64_t{2}, kNone, int64_t{99}}) {
    Kernel k;
    k.id = static_cast<int64_t>(run.kernels.size());
    k.op = op;
    run.kernels.push_back(k);
  }
  for (int64_t op : {int64_t{4}, int64_t{1}}) {
    Transfer t;
    t.id = static_cast<int64_t>(run.transfers.size());
    t.op = op;
    run.transfers.push_back(t);
  }
  return run;
}

std::vector<int64_t> V(std::span<const int64_t> s) { return {s.begin(), s.end()}; }

TEST(RunIndex, NestingKernelsAndCopies) {
  magneton::Run run = Nested();
  RunIndex index(run);
  ASSERT_EQ(index.ops(), 5u);
  EXPECT_EQ(V(index.children(0)), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(index.Subtree(0), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(index.Subtree(4), (std::vector<int64_t>{4}));
  EXPECT_EQ(index.Subtrees({1, 4, -1, 7, 3}), (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(index.deepest_first(), (std::vector<int64_t>{3, 1, 2, 0, 4}));
  EXPECT_EQ(V(index.kernels(0)), (std::vector<int64_t>{1}));
  EXPECT_EQ(V(index.kernels(3)), (std::vector<int64_t>{0}));
  EXPECT_EQ(V(index.transfers(1)), (std::vector<int64_t>{1}));
  EXPECT_EQ(index.op_of_kernel(2), 2);
  EXPECT_EQ(index.op_of_kernel(3), kNone);
  EXPECT_EQ(index.op_of_kernel(4), kNone);  // names no op of the run
}

TEST(RunIndex, TheProducerOfATensorIsTheFirstOpToGiveItOut) {
  magneton::Run run = Nested();
  run.tensors.resize(4);
  run.ops[1].outputs = {0};
  run.ops[3].outputs = {0, 1};  // nested in 1, later in id order: gives out 0 again, makes 1
  run.ops[4].inputs = {1};
  run.ops[4].outputs = {1, 7};  // in place on 1; 7 is no tensor of the run
  RunIndex index(run);
  EXPECT_EQ(index.producer(0), 1);
  EXPECT_EQ(index.producer(1), 3);
  EXPECT_EQ(index.producer(2), kNone);  // read only, or made before the run
  EXPECT_EQ(index.producer(7), kNone);
  EXPECT_EQ(index.producer(-1), kNone);
}

TEST(RunIndex, CutsACycleOfACorruptFile) {
  magneton::Run run = Nested();
  run.ops[0].parent = 3;  // 0 -> 3 -> 1 -> 0
  RunIndex index(run);
  int cut = 0;
  for (int64_t op : {0, 1, 3}) cut += index.parent(op) == kNone;
  EXPECT_EQ(cut, 1);
  EXPECT_EQ(index.Subtree(2).size(), 1u);
  EXPECT_EQ(index.deepest_first().size(), 5u);
}

}  // namespace
}  // namespace magneton
