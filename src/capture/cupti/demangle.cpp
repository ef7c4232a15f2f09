#include "capture/cupti/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace magneton::capture {

std::string Demangle(const char* name) {
  if (name == nullptr) return {};
  // Only Itanium-mangled names start with _Z; anything else would just fail slower.
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return name;
  return out.get();
}

}  // namespace magneton::capture
