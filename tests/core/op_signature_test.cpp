#include "core/op_signature.h"

#include <gtest/gtest.h>

namespace magneton {
namespace {

TEST(OpSignature, NamesDtypesAndShapes) {
  magneton::Run run;
  Tensor a;
  a.dtype = "float32";
  a.shape = {4, 16};
  run.tensors.push_back(a);
  Op op;
  op.name = "aten::mm";
  op.inputs = {0, 5};
  EXPECT_EQ(OpSignature(run, op), "aten::mm(float32[4x16],?)");
  op.inputs = {};
  EXPECT_EQ(OpSignature(run, op), "aten::mm()");
}

}  // namespace
}  // namespace magneton
