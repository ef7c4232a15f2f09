// The dtype names of a run ("float32", "bfloat16", ...): one spelling for the
// recorder's tensors and the replay's operator signatures, so they match.
#pragma once

#include <c10/core/ScalarType.h>

#include <string>

namespace magneton::capture {

std::string DtypeName(c10::ScalarType s);

}  // namespace magneton::capture
