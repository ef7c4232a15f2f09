// Rows to the run store as they complete, so that a recording of any length
// holds in memory only what is still running (docs/recording.md, "What
// survives a kill"). An op row is complete when the op ended; a tensor row
// when no running op may still set its fingerprint (rows made before the
// oldest running op started). Ops go in id order, each after its tensors.
#include <fmt/core.h>

#include "capture/torch/recorder_state.h"
#include "core/thread_name.h"

namespace magneton::capture {

namespace {

// Autograd nodes find their forward op by sequence number; a backward pass
// refers to the forward of its own step, so entries this far behind the
// rows written are gone for good.
constexpr int64_t kForwardWindowOps = 1'000'000;

bool TensorsWritten(const Op& op, int64_t written) {
  for (auto t : op.inputs)
    if (t >= written) return false;
  for (auto t : op.outputs)
    if (t >= written) return false;
  return true;
}

template <class Rows>
void WriteAll(RunWriter& w, const Rows& rows, Status* first) {
  for (const auto& r : rows) {
    Status s = w.Add(r);
    if (!s.ok() && first->ok()) *first = s;
  }
}

}  // namespace

Status FlushRows(RecorderState& st, bool all, int64_t stop_ns) {
  std::vector<Tensor> tensors;
  std::vector<Op> ops;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    const int64_t oldest_running = st.open_ops.empty() ? st.ops.size() : *st.open_ops.begin();
    const int64_t tensor_mark = all || oldest_running == st.ops.size()
                                    ? st.dataflow.rows()
                                    : st.ops.at(oldest_running).first_new_tensor;
    tensors = st.dataflow.TakeRows(tensor_mark);
    while (!st.ops.empty() && (all || st.ops.written() < oldest_running) &&
           (all || TensorsWritten(st.ops.at(st.ops.written()).op, st.dataflow.taken()))) {
      OpRows::Entry e = st.ops.take();
      if (e.op.end_ns == 0) e.op.end_ns = stop_ns;  // still running when the recording stopped
      if (e.info) {
        e.op.name = e.info->name;
        e.op.schema = e.info->schema;
      }
      ops.push_back(std::move(e.op));
    }
    const int64_t forget_below = st.ops.written() - kForwardWindowOps;
    if (forget_below > 0)
      std::erase_if(st.forward_by_seq, [&](const auto& entry) { return entry.second < forget_below; });
  }
  // Frames and stacks before the ops that name them, tensors before their ops.
  std::vector<Frame> frames;
  std::vector<Stack> stacks;
  st.stacks.TakeNew(&frames, &stacks);
  std::lock_guard<std::mutex> writer(st.writer_mu);
  Status first;
  WriteAll(*st.writer, frames, &first);
  WriteAll(*st.writer, stacks, &first);
  WriteAll(*st.writer, tensors, &first);
  WriteAll(*st.writer, ops, &first);
  if (first.ok() && st.energy) first = st.energy->Drain(st.writer.get());
  return first;
}

void StartFlushing(RecorderState& st) {
  {
    std::lock_guard<std::mutex> lock(st.flush_mu);
    st.flushing = true;
  }
  st.flusher = std::thread([&st] {
    NameThisThread("rows");
    std::unique_lock<std::mutex> lock(st.flush_mu);
    while (true) {
      st.flush_wake.wait_for(lock, std::chrono::nanoseconds(kFlushEveryNs),
                             [&] { return st.flush_stop || st.flush_now; });
      if (st.flush_stop) break;
      st.flush_now = false;
      lock.unlock();
      if (Status s = FlushRows(st, false); !s.ok()) st.callback_errors.fetch_add(1);
      lock.lock();
      ++st.flush_rounds;
      st.flushed.notify_all();
    }
  });
}

void WaitForFlush(RecorderState& st) {
  std::unique_lock<std::mutex> lock(st.flush_mu);
  if (!st.flushing || st.flush_stop) return;
  const uint64_t round = st.flush_rounds;
  st.flush_now = true;
  st.flush_wake.notify_all();
  st.flushed.wait(lock, [&] { return st.flush_rounds > round || st.flush_stop; });
}

void StopFlushing(RecorderState& st) {
  {
    std::lock_guard<std::mutex> lock(st.flush_mu);
    st.flush_stop = true;
  }
  st.flush_wake.notify_all();
  st.flushed.notify_all();
  if (st.flusher.joinable()) st.flusher.join();
}

}  // namespace magneton::capture
