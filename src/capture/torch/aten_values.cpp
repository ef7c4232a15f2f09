#include "capture/torch/aten_values.h"

#include <cctype>
#include <cstdio>

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

std::string Join(c10::IntArrayRef v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

IntArg IntArgOf(const c10::Argument& a) {
  c10::TypePtr t = a.real_type();
  if (auto opt = t->cast<c10::OptionalType>()) t = opt->getElementType();
  switch (t->kind()) {
    case c10::TypeKind::ScalarTypeType: return IntArg::kDtype;
    case c10::TypeKind::LayoutType: return IntArg::kLayout;
    case c10::TypeKind::MemoryFormatType: return IntArg::kMemoryFormat;
    default: return IntArg::kInt;
  }
}

namespace {

std::string IntText(int64_t v, IntArg meaning) {
  switch (meaning) {
    case IntArg::kDtype:
      if (v >= 0 && v < static_cast<int64_t>(c10::ScalarType::NumOptions))
        return DtypeName(static_cast<c10::ScalarType>(v));
      break;
    case IntArg::kLayout:
      if (v == static_cast<int64_t>(c10::Layout::Strided)) return "strided";
      if (v == static_cast<int64_t>(c10::Layout::Sparse)) return "sparse_coo";
      break;
    case IntArg::kMemoryFormat:
      switch (static_cast<c10::MemoryFormat>(v)) {
        case c10::MemoryFormat::Contiguous: return "contiguous_format";
        case c10::MemoryFormat::Preserve: return "preserve_format";
        case c10::MemoryFormat::ChannelsLast: return "channels_last";
        case c10::MemoryFormat::ChannelsLast3d: return "channels_last_3d";
        default: break;
      }
      break;
    case IntArg::kInt: break;
  }
  return std::to_string(v);
}

}  // namespace

std::string ScalarText(const c10::IValue& v, IntArg meaning) {
  if (v.isNone()) return "None";
  if (v.isBool()) return v.toBool() ? "True" : "False";
  if (v.isInt()) return IntText(v.toInt(), meaning);
  if (v.isDouble()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v.toDouble());
    return buf;
  }
  if (v.isString()) return "'" + v.toStringRef() + "'";
  if (v.isIntList()) return "[" + Join(v.toIntVector(), ",") + "]";
  if (v.isDevice()) return v.toDevice().str();
  if (v.isList()) {
    std::string s = "[";
    bool first = true;
    for (const auto& e : v.toListRef()) {
      s += (first ? "" : ",") + (e.isTensor() ? std::string("T") : ScalarText(e));
      first = false;
    }
    return s + "]";
  }
  return v.tagKind();
}

}  // namespace magneton::capture
