// CUPTI callbacks on the host program's own threads: native stacks at kernel
// launches and at calls that can wait for the device (--stacks), the waits
// told to a WaitSites, and NVTX push/pop tracking (--only-ranges). Both run on the calling thread, so they
// only take a short lock and never write the run.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "capture/cupti/stack_table.h"
#include "capture/cupti/wait_sites.h"
#include "core/status.h"

namespace magneton::capture {

class LaunchCallbacks {
 public:
  // `stacks`: where launch stacks go (nullptr: none). `waits`: told of each
  // call that can wait for the device (nullptr: none). `range_prefix`: NVTX
  // push/pop ranges whose name starts with it call on_range(true) when entered
  // and on_range(false) when left (empty: NVTX is not watched).
  LaunchCallbacks(StackTable* stacks, WaitSites* waits, std::string range_prefix, std::function<void(bool)> on_range);
  ~LaunchCallbacks();

  Status Subscribe();
  void Unsubscribe();

  // The interned stack of the launch with this correlation id (writer's thread).
  std::optional<uint32_t> StackIndex(uint32_t correlation) const;
  // Forgets launches seen more than two calls ago (writer's thread, now and then).
  void Age();

  int64_t stacks_captured() const { return captured_.load(std::memory_order_relaxed); }

 private:
  static void CUPTIAPI OnCallback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
  void OnLaunch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& data);
  void OnNvtx(CUpti_CallbackId cbid, const CUpti_NvtxData& data);

  StackTable* stacks_;
  WaitSites* waits_;
  const std::string prefix_;
  std::function<void(bool)> on_range_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::atomic<int64_t> captured_{0};

  // correlation id -> stack index; two generations so old launches age out.
  mutable std::mutex mu_;
  std::unordered_map<uint32_t, uint32_t> current_, previous_;
};

}  // namespace magneton::capture
