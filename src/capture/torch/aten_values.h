// How the recorder and the replay read ATen values, in one place so that
// their operator signatures and input lists agree: dtype names ("float32",
// "bfloat16", ...) and the tensors of an argument.
#pragma once

#include <ATen/core/ivalue.h>
#include <c10/core/ScalarType.h>

#include <string>

namespace magneton::capture {

std::string DtypeName(c10::ScalarType s);

// The defined tensors of one argument (a tensor, a list or a tuple of them),
// in order.
template <class F>
void ForEachTensor(const c10::IValue& v, F&& f) {
  if (v.isTensor()) {
    if (v.toTensor().defined()) f(v.toTensor());
  } else if (v.isList()) {
    for (const auto& e : v.toListRef())
      if (e.isTensor() && e.toTensor().defined()) f(e.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements())
      if (e.isTensor() && e.toTensor().defined()) f(e.toTensor());
  }
}

}  // namespace magneton::capture
