#include "capture/torch/aten_values.h"

#include <cctype>

namespace magneton::capture {

std::string DtypeName(c10::ScalarType s) {
  switch (s) {
    case c10::ScalarType::Float: return "float32";
    case c10::ScalarType::Double: return "float64";
    case c10::ScalarType::Half: return "float16";
    case c10::ScalarType::BFloat16: return "bfloat16";
    case c10::ScalarType::Long: return "int64";
    case c10::ScalarType::Int: return "int32";
    case c10::ScalarType::Short: return "int16";
    case c10::ScalarType::Char: return "int8";
    case c10::ScalarType::Byte: return "uint8";
    case c10::ScalarType::Bool: return "bool";
    case c10::ScalarType::ComplexFloat: return "complex64";
    case c10::ScalarType::ComplexDouble: return "complex128";
    case c10::ScalarType::Float8_e4m3fn: return "float8_e4m3fn";
    case c10::ScalarType::Float8_e5m2: return "float8_e5m2";
    default: {
      std::string n = c10::toString(s);
      for (auto& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return n;
    }
  }
}

}  // namespace magneton::capture
