// How the recorder and the replay read ATen values, in one place so that
// their operator signatures and input lists agree: dtype names ("float32",
// "bfloat16", ...), non-tensor arguments as text and the tensors of an argument.
#pragma once

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

namespace magneton::capture {

std::string DtypeName(c10::ScalarType s);

std::string Join(c10::IntArrayRef v, const char* sep);

// What an int argument stands for: schemas pass dtypes, layouts and memory
// formats as ints.
enum class IntArg : uint8_t { kInt, kDtype, kLayout, kMemoryFormat };
IntArg IntArgOf(const c10::Argument& a);

// A non-tensor argument as text: "True", "3", "0.5", "[1,2]", "cuda:0",
// "'mean'", "float16", "channels_last"; a tensor inside a list is "T".
std::string ScalarText(const c10::IValue& v, IntArg meaning = IntArg::kInt);

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
