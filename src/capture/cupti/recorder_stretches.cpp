#include "capture/cupti/recorder_stretches.h"

#include <algorithm>

namespace magneton::capture {

void RecorderStretches::Add(int32_t device, int64_t stream, int64_t start_ns, int64_t end_ns) {
  auto [it, fresh] = open_.try_emplace({device, stream});
  Kernel& k = it->second;
  if (fresh) {
    k.name = std::string(kRecorderWorkName);
    k.device = device;
    k.stream = stream;
    k.op = kRecorderWork;
    k.start_ns = start_ns;
    k.end_ns = end_ns;
    return;
  }
  k.start_ns = std::min(k.start_ns, start_ns);
  k.end_ns = std::max(k.end_ns, end_ns);
  ++folded_;
}

std::vector<Kernel> RecorderStretches::End(int32_t device, int64_t stream) {
  std::vector<Kernel> out;
  if (auto node = open_.extract({device, stream}); !node.empty()) out.push_back(std::move(node.mapped()));
  return out;
}

std::vector<Kernel> RecorderStretches::EndAll() {
  std::vector<Kernel> out;
  for (auto& [key, k] : open_) out.push_back(std::move(k));
  open_.clear();
  return out;
}

}  // namespace magneton::capture
