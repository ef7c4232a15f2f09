// C++ symbol names as people read them. CUPTI reports kernel names mangled
// ("_ZN2at6native..."); C kernels and Triton kernels are plain and pass through.
#pragma once

#include <string>

namespace magneton::capture {

// The demangled form of `name`, or `name` itself when it is not a mangled C++ name.
std::string Demangle(const char* name);

}  // namespace magneton::capture
