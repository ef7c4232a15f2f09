// Names the calling thread "mgt-<what>" (Linux keeps 15 characters), so that
// a process's per-thread CPU time from procfs tells Magneton's own threads
// (samplers, the CUPTI drain, the run writer) from the program's, and the
// host-CPU evidence of a diff can leave them out (docs/diff.md, "Host CPU").
#pragma once

#include <pthread.h>

#include <string>
#include <string_view>

namespace magneton {

inline constexpr std::string_view kOwnThreadPrefix = "mgt-";

inline void NameThisThread(std::string_view what) {
  std::string name = std::string(kOwnThreadPrefix) + std::string(what);
  if (name.size() > 15) name.resize(15);
  (void)pthread_setname_np(pthread_self(), name.c_str());
}

}  // namespace magneton
