#include "analysis/diff/call_site.h"

#include <fmt/core.h>

#include <algorithm>

namespace magneton::analysis {
namespace {

// Frames of the framework itself say nothing about which user code made the call.
bool IsFrameworkFile(const std::string& file) {
  return file.empty() || file.front() == '<' || file.find("/torch/") != std::string::npos ||
         file.find("/importlib/") != std::string::npos || file.find("/contextlib.py") != std::string::npos;
}

// Native frames of CUDA's own libraries (and of c10, which wraps them) are
// where every launch and wait ends up; the frame that called into them says
// which code did.
bool IsRuntimeModule(const std::string& module) {
  for (const char* lib : {"libcudart", "libcuda.", "libcupti", "libcublas", "libcudnn", "libnccl", "libc10"})
    if (module.find(lib) != std::string::npos) return true;
  return false;
}

// The outer frames of `python -m magneton record script.py` (runpy, Magneton's
// runner) are every program's under that route: the program's own start below them.
bool IsLauncherFrame(const Frame& f) {
  return f.kind == "python" && (f.file.ends_with("/magneton/__main__.py") || f.file.ends_with("/runpy.py") ||
                                f.file == "<frozen runpy>");
}

std::vector<const Frame*> WithoutLauncher(std::vector<const Frame*> frames) {
  auto first = std::find_if(frames.begin(), frames.end(), [](const Frame* f) { return !IsLauncherFrame(*f); });
  frames.erase(frames.begin(), first);
  return frames;
}

bool SameFrame(const Frame& x, const Frame& y) {
  if (x.kind != y.kind) return false;
  if (x.kind == "python") return x.file == y.file && x.function == y.function && x.line == y.line;
  return x.function == y.function && x.module == y.module;
}

std::string Basename(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

CallSite ToCallSite(const Frame& f) {
  return {f.function, f.kind == "native" && f.file.empty() ? f.module : f.file, f.line, f.kind};
}

std::string Describe(const CallSite& site) {
  if (site.empty()) return "";
  if (site.kind == "native") return fmt::format("{}!{}", Basename(site.file), site.function);
  if (site.line > 0) return fmt::format("{}:{} ({})", Basename(site.file), site.line, site.function);
  return fmt::format("{} ({})", Basename(site.file), site.function);
}

std::vector<const Frame*> OutermostFirst(const Run& run, int64_t stack) {
  std::vector<const Frame*> out;
  if (stack < 0 || stack >= static_cast<int64_t>(run.stacks.size())) return out;
  const auto& frames = run.stacks[stack].frames;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it)
    if (*it >= 0 && *it < static_cast<int64_t>(run.frames.size())) out.push_back(&run.frames[*it]);
  return out;
}

CallSite UserCallSite(const Run& run, int64_t stack) {
  auto frames = OutermostFirst(run, stack);
  for (auto it = frames.rbegin(); it != frames.rend(); ++it)
    if ((*it)->kind == "python" && !IsFrameworkFile((*it)->file)) return ToCallSite(**it);
  for (auto it = frames.rbegin(); it != frames.rend(); ++it)
    if ((*it)->kind == "native" && !IsRuntimeModule((*it)->module)) return ToCallSite(**it);
  return frames.empty() ? CallSite{} : ToCallSite(*frames.back());
}

Divergence FirstDivergence(const Run& a, int64_t stack_a, const Run& b, int64_t stack_b) {
  Divergence d;
  auto fa = WithoutLauncher(OutermostFirst(a, stack_a)), fb = WithoutLauncher(OutermostFirst(b, stack_b));
  if (fa.empty() || fb.empty()) return d;  // depth -1: not recorded
  size_t n = std::min(fa.size(), fb.size()), i = 0;
  while (i < n && SameFrame(*fa[i], *fb[i])) ++i;
  d.depth = static_cast<int>(i);
  if (i > 0) d.common = ToCallSite(*fa[i - 1]);
  if (i < fa.size()) d.frame_a = ToCallSite(*fa[i]);
  if (i < fb.size()) d.frame_b = ToCallSite(*fb[i]);
  return d;
}

}  // namespace magneton::analysis
