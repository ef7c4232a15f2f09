#include "capture/cupti/stack_table.h"

#include <dlfcn.h>
#include <execinfo.h>

#include <algorithm>

#include <fmt/core.h>

#include "capture/cupti/demangle.h"
#include "core/store.h"

namespace magneton::capture {
namespace {

// libunwind is loaded when first needed rather than linked, so the injection
// library loads on machines without it (a library that fails to load would
// fail the host's cuInit); glibc's backtrace() is the fallback.
using UnwBacktrace = int (*)(void**, int);

UnwBacktrace LoadLibunwind() {
  void* h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  return h ? reinterpret_cast<UnwBacktrace>(dlsym(h, "unw_backtrace")) : nullptr;
}

UnwBacktrace Libunwind() {
  static const UnwBacktrace fn = LoadLibunwind();
  return fn;
}

}  // namespace

int CaptureStack(uintptr_t* ips, int max) {
  // unw_backtrace walks with libunwind's cached unwind info: the fast path.
  UnwBacktrace unw = Libunwind();
  int n = unw ? unw(reinterpret_cast<void**>(ips), max) : backtrace(reinterpret_cast<void**>(ips), max);
  return n < 0 ? 0 : n;
}

const char* StackUnwinder() { return Libunwind() ? "libunwind" : "glibc backtrace"; }

StackTable::StackTable(std::vector<std::string> skip_modules, int64_t first_frame_id, int64_t first_stack_id)
    : skip_modules_(std::move(skip_modules)), next_frame_(first_frame_id), next_stack_(first_stack_id) {}

uint32_t StackTable::Intern(const uintptr_t* ips, int n) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the addresses
  for (int i = 0; i < n; ++i) {
    h ^= static_cast<uint64_t>(ips[i]);
    h *= 1099511628211ull;
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto [lo, hi] = by_hash_.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    const auto& s = stacks_[it->second];
    if (s.size() == static_cast<size_t>(n) && std::equal(s.begin(), s.end(), ips)) return it->second;
  }
  uint32_t index = static_cast<uint32_t>(stacks_.size());
  stacks_.emplace_back(ips, ips + n);
  by_hash_.emplace(h, index);
  return index;
}

int64_t StackTable::interned() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(stacks_.size());
}

int64_t StackTable::RunId(uint32_t index) const { return index < run_ids_.size() ? run_ids_[index] : kNone; }

std::vector<int64_t> StackTable::Symbolize(const std::vector<uintptr_t>& ips, std::vector<Frame>* new_frames) {
  std::vector<int64_t> frames;
  bool inner = true;
  for (size_t i = 0; i < ips.size(); ++i) {
    // A return address points after the call; look up the call itself.
    uintptr_t pc = i == 0 ? ips[i] : ips[i] - 1;
    Dl_info info{};
    std::string module, function;
    if (dladdr(reinterpret_cast<void*>(pc), &info) && info.dli_fname) {
      module = info.dli_fname;
      if (info.dli_sname) {
        function = Demangle(info.dli_sname);
      } else {
        function = fmt::format("{}+0x{:x}", module.substr(module.rfind('/') + 1),
                               pc - reinterpret_cast<uintptr_t>(info.dli_fbase));
      }
    } else {
      function = fmt::format("0x{:x}", pc);
    }
    if (inner) {
      bool skip = false;
      for (const auto& m : skip_modules_) skip |= !module.empty() && module.find(m) != std::string::npos;
      if (skip) continue;
      inner = false;
    }
    std::string key = module + '\0' + function;
    auto [it, added] = frame_ids_.try_emplace(key, next_frame_);
    if (added) {
      Frame f;
      f.id = next_frame_++;
      f.kind = "native";
      f.function = std::move(function);
      f.module = std::move(module);
      new_frames->push_back(std::move(f));
    }
    frames.push_back(it->second);
  }
  return frames;
}

Status StackTable::WriteNew(RunWriter* writer) {
  std::vector<std::vector<uintptr_t>> fresh;
  {
    std::lock_guard<std::mutex> lock(mu_);
    fresh.assign(stacks_.begin() + static_cast<ptrdiff_t>(run_ids_.size()), stacks_.end());
  }
  for (const auto& ips : fresh) {
    std::vector<Frame> new_frames;
    std::vector<int64_t> frames = Symbolize(ips, &new_frames);
    for (const Frame& f : new_frames) MAGNETON_RETURN_IF_ERROR(writer->Add(f));
    auto [it, added] = stack_ids_.try_emplace(frames, next_stack_);
    if (added) {
      Stack s;
      s.id = next_stack_++;
      s.frames = frames;
      MAGNETON_RETURN_IF_ERROR(writer->Add(s));
    }
    run_ids_.push_back(it->second);
  }
  return Status::Ok();
}

}  // namespace magneton::capture
