// RunWriter: streams a run into a new store file.
//
// Add() validates a row, interns its strings and queues it as integers; a
// writer thread inserts queued rows into SQLite (store_sink.h) and commits
// whenever a second has passed since the last commit and rows are waiting,
// so a killed workload loses at most its last second even when it stops
// adding rows. Running SQLite on its own thread lets the caller's work
// (decoding CUPTI buffers, building rows) overlap the inserts.
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>

#include <fmt/core.h>

#include "core/schema.h"
#include "core/store.h"
#include "core/store_sink.h"
#include "core/tables.h"
#include "core/thread_name.h"

namespace magneton {
namespace {

using store::Batch;
using store::Row;
using store::RowKind;
using Clock = std::chrono::steady_clock;

// The writer thread takes rows in chunks; a caller that outruns it waits once
// this many rows are queued (bounded memory, and bounded loss on a kill).
constexpr size_t kWakeRows = 4096;
constexpr size_t kMaxQueuedRows = 64 * 1024;
// How often an idle writer thread checks whether a commit is due.
constexpr auto kPoll = std::chrono::milliseconds(100);
// Half a second: with the callers' own flush period, a kill loses about a second.
constexpr auto kCommitEvery = std::chrono::milliseconds(500);

int64_t Bits(double d) { return std::bit_cast<int64_t>(d); }

// Profiled programs fork (DataLoader workers, multiprocessing). A child
// inherits the writer's memory but not its thread, and must not touch the
// parent's SQLite connection; so each fork bumps this counter in the child,
// and a writer created in an earlier generation refuses every call there and
// leaks its thread and connection instead of joining or closing them.
std::atomic<uint64_t> g_fork_generation{0};

uint64_t ForkGeneration() {
  static const bool registered = [] {
    pthread_atfork(nullptr, nullptr, [] { g_fork_generation.fetch_add(1, std::memory_order_relaxed); });
    return true;
  }();
  (void)registered;
  return g_fork_generation.load(std::memory_order_relaxed);
}

// Hash and equality that accept string_view, so interning a name that is
// already known allocates nothing.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Next id expected per table: writers must add rows densely and in order.
struct NextIds {
  int64_t devices = 0, ops = 0, tensors = 0, kernels = 0, transfers = 0, api_calls = 0, ranges = 0,
          frames = 0, stacks = 0, series = 0, replays = 0, strings = 0;
};

class SqliteRunWriter final : public RunWriter {
 public:
  explicit SqliteRunWriter(std::string path)
      : path_(path), generation_(ForkGeneration()), sink_(std::make_unique<store::StoreSink>(std::move(path))) {}
  ~SqliteRunWriter() override {
    if (Forked()) {  // see g_fork_generation: leak what belongs to the parent
      (void)thread_.release();
      (void)sink_.release();
      (void)sync_.release();
      return;
    }
    Close();
  }

  Status Open(const RunInfo& info);

  Status SetInfo(const RunInfo& info) override;
  Status Add(const Device& d) override;
  Status Add(const Op& op) override;
  Status Add(const Tensor& t) override;
  Status Add(const Kernel& k) override;
  Status Add(const Transfer& t) override;
  Status Add(const ApiCall& a) override;
  Status Add(const Range& r) override;
  Status Add(const Frame& f) override;
  Status Add(const Stack& s) override;
  Status Add(const ReplayMeasurement& m) override;
  Status Add(const Stat& s) override;
  Status AddSeries(const SensorSeries& s) override;
  Status AddSample(int64_t series_id, int64_t t_ns, double value) override;
  Status SetConfig(const std::string& key, const std::string& value) override;
  Status LinkKernel(int64_t kernel_id, int64_t op_id) override;
  Status LinkTransfer(int64_t transfer_id, int64_t op_id) override;
  void HoldCommits(bool hold) override;
  Status Flush() override;
  Status Close() override;

 private:
  using Lock = std::unique_lock<std::mutex>;

  bool Forked() const { return generation_ != g_fork_generation.load(std::memory_order_relaxed); }

  Error ForkedError() const {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: run writer belongs to the parent of this forked process", path_));
  }
  // Starts a call: refuses it in a forked child (before touching the mutex,
  // which a parent thread may have held at the fork), then takes the lock and
  // refuses it on a closed or failed writer.
  Status Enter(Lock& lock) {
    if (Forked()) return ForkedError();
    lock.lock();
    return Ready();
  }

  // All of these run with the lock held.
  Status Ready() const {
    if (closed_) return MakeError(ErrorCode::kInvalidArgument, fmt::format("{}: run writer is closed", path_));
    return failed_;
  }
  Status CheckId(std::string_view what, int64_t id, int64_t* next) {
    if (id != *next)
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("{}: {} id {} out of order (expected {})", path_, what, id, *next));
    ++*next;
    return Status::Ok();
  }
  Status CheckRef(const char* what, int64_t id, int64_t count) const {
    if (id >= 0 && id < count) return Status::Ok();
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("{}: no {} {} written yet", path_, what, id));
  }
  // The strings id of `s`; queues the string on first sight.
  int64_t Intern(std::string_view s);
  // Queues `row` of `table` (tables.h), its strings interned first.
  template <class T>
  void Put(const T& table, const typename T::Row& row) {
    int64_t v[store::kMaxParams];
    store::EncodeRow(table, row, pending_, [this](std::string_view s) { return Intern(s); }, v);
    Row& r = pending_.Push(store::kRowKindOf<typename T::Row>);
    std::copy(v, v + T::kWidth, r.v);
  }
  // Adds `row` of `table` after checking its id is `*next`; then children()
  // queues the rows that belong to it, under the same lock.
  template <class T, class Children>
  Status AddRow(const T& table, const typename T::Row& row, int64_t* next, Children&& children) {
    Lock lock(sync_->mu, std::defer_lock);
    MAGNETON_RETURN_IF_ERROR(Enter(lock));
    MAGNETON_RETURN_IF_ERROR(CheckId(table.noun, row.id, next));
    Put(table, row);
    children();
    return Queued(lock);
  }
  template <class T>
  Status AddRow(const T& table, const typename T::Row& row, int64_t* next) {
    return AddRow(table, row, next, [] {});
  }
  void PutText(RowKind kind, std::string_view a, std::string_view b) {
    Row& r = pending_.Push(kind);
    r.v[0] = pending_.Text(a);
    r.v[1] = pending_.Text(b);
  }
  void PutInfo(const RunInfo& info);
  // Ends an add: wakes the writer thread when a chunk is ready, and holds
  // the caller while the queue is full.
  Status Queued(Lock& lock);

  // Queues an update of row `id` (of `count` written) to name op `op_id`.
  Status Link(RowKind kind, const char* what, int64_t id, const int64_t* count, int64_t op_id);
  void WriterLoop();

  const std::string path_;
  const uint64_t generation_;
  std::unique_ptr<store::StoreSink> sink_;  // the writer thread's while it runs

  // On the heap so that a forked child can leak it: its copy may be locked,
  // or have waiters that do not exist there (destroying it would hang).
  struct Sync {
    std::mutex mu;
    std::condition_variable wake;      // to the writer thread: work, flush or stop
    std::condition_variable progress;  // to callers: queue drained, flush done
  };
  std::unique_ptr<Sync> sync_ = std::make_unique<Sync>();
  Batch pending_;
  uint64_t flush_requested_ = 0, flush_done_ = 0;
  int holds_ = 0;             // HoldCommits nesting
  bool commit_held_ = false;  // a commit came due inside a group: made when it ends
  bool stop_ = false, closed_ = false;
  Status failed_;  // the writer thread's first error; every later call returns it
  std::unique_ptr<std::thread> thread_;
  std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>> strings_;
  NextIds next_;
};

int64_t SqliteRunWriter::Intern(std::string_view s) {
  if (auto it = strings_.find(s); it != strings_.end()) return it->second;
  const int64_t id = next_.strings++;
  strings_.emplace(std::string(s), id);
  Row& r = pending_.Push(RowKind::kString);
  r.v[0] = id;
  r.v[1] = pending_.Text(s);
  return id;
}

void SqliteRunWriter::PutInfo(const RunInfo& info) {
  pending_.Push(RowKind::kInfoClear);
  const std::string version = info.magneton_version.empty() ? MAGNETON_VERSION : info.magneton_version;
  PutText(RowKind::kInfoPut, "command", info.command);
  PutText(RowKind::kInfoPut, "host", info.host);
  PutText(RowKind::kInfoPut, "clock_domain", info.clock_domain);
  PutText(RowKind::kInfoPut, "magneton_version", version);
  PutText(RowKind::kInfoPut, "pid", std::to_string(info.pid));
  PutText(RowKind::kInfoPut, "start_ns", std::to_string(info.start_ns));
  PutText(RowKind::kInfoPut, "end_ns", std::to_string(info.end_ns));
  for (const auto& [k, v] : info.extra) PutText(RowKind::kInfoPut, std::string(schema::kExtraPrefix) + k, v);
}

Status SqliteRunWriter::Queued(Lock& lock) {
  const size_t queued = pending_.rows.size();
  if (queued >= kWakeRows) sync_->wake.notify_one();
  if (queued >= kMaxQueuedRows)
    sync_->progress.wait(lock, [&] { return pending_.rows.size() < kMaxQueuedRows || !failed_.ok(); });
  return Status::Ok();
}

Status SqliteRunWriter::Open(const RunInfo& info) {
  MAGNETON_RETURN_IF_ERROR(sink_->Create());
  PutText(RowKind::kMetaPut, schema::kMetaFormat, schema::kFormat);
  PutText(RowKind::kMetaPut, schema::kMetaMajor, std::to_string(kSchemaMajor));
  PutText(RowKind::kMetaPut, schema::kMetaMinor, std::to_string(kSchemaMinor));
  PutText(RowKind::kMetaPut, schema::kMetaWriter, std::string("magneton ") + MAGNETON_VERSION);
  PutText(RowKind::kMetaPut, schema::kMetaComplete, "0");
  PutInfo(info);
  // The empty run is committed at once, so even a writer killed right away
  // leaves a file that loads.
  MAGNETON_RETURN_IF_ERROR(sink_->Apply(pending_));
  pending_.Clear();
  MAGNETON_RETURN_IF_ERROR(sink_->Commit());
  try {
    thread_ = std::make_unique<std::thread>([this] {
      NameThisThread("store");
      WriterLoop();
    });
  } catch (const std::system_error& e) {
    return MakeError(ErrorCode::kInternal, fmt::format("{}: cannot start the writer thread: {}", path_, e.what()));
  }
  return Status::Ok();
}

void SqliteRunWriter::WriterLoop() {
  Batch work;
  auto last_commit = Clock::now();
  bool uncommitted = false, failed = false;
  Lock lock(sync_->mu);
  while (true) {
    sync_->wake.wait_for(lock, kPoll, [&] {
      return stop_ || flush_requested_ != flush_done_ || pending_.rows.size() >= kWakeRows ||
             (commit_held_ && holds_ == 0);
    });
    std::swap(work, pending_);
    const uint64_t flush_to = flush_requested_;
    const bool stopping = stop_, held = holds_ > 0;
    sync_->progress.notify_all();  // the queue has room again
    lock.unlock();

    Status st;
    // After a failed insert, later rows would no longer line up with their
    // ids: the rows before the failure stay, the rest are dropped.
    if (!work.empty() && !failed) {
      st = sink_->Apply(work);
      uncommitted = true;
    }
    work.Clear();
    // On stop, Close commits after the join.
    const bool time = Clock::now() - last_commit >= kCommitEvery;
    const bool due = flush_to != flush_done_ || (time && !held);
    if (st.ok() && uncommitted && due && !stopping) {
      st = sink_->Commit();
      last_commit = Clock::now();
      uncommitted = false;
    }

    failed = failed || !st.ok();
    lock.lock();
    commit_held_ = time && held && uncommitted;  // made as soon as the group ends
    if (!st.ok() && failed_.ok()) failed_ = st;
    flush_done_ = flush_to;
    sync_->progress.notify_all();
    if (stopping) return;
  }
}

void SqliteRunWriter::HoldCommits(bool hold) {
  if (Forked()) return;
  Lock lock(sync_->mu);
  holds_ += hold ? 1 : (holds_ > 0 ? -1 : 0);
  if (holds_ == 0 && commit_held_) sync_->wake.notify_one();
}

Status SqliteRunWriter::Flush() {
  Lock lock(sync_->mu, std::defer_lock);
  MAGNETON_RETURN_IF_ERROR(Enter(lock));
  const uint64_t target = ++flush_requested_;
  sync_->wake.notify_one();
  sync_->progress.wait(lock, [&] { return flush_done_ >= target; });
  return failed_;
}

Status SqliteRunWriter::Close() {
  if (Forked()) return ForkedError();
  {
    Lock lock(sync_->mu);
    if (closed_) return Status::Ok();
    closed_ = true;
    if (thread_) {
      PutText(RowKind::kMetaPut, schema::kMetaComplete, "1");
      stop_ = true;
      sync_->wake.notify_one();
    }
  }
  if (thread_) thread_->join();
  Status finished = sink_->Finish();
  return failed_.ok() ? finished : failed_;
}

Status SqliteRunWriter::SetInfo(const RunInfo& info) {
  Lock lock(sync_->mu, std::defer_lock);
  MAGNETON_RETURN_IF_ERROR(Enter(lock));
  PutInfo(info);
  return Queued(lock);
}

Status SqliteRunWriter::Add(const Device& d) { return AddRow(tables::kDevices, d, &next_.devices); }

Status SqliteRunWriter::Add(const Op& op) {
  // Edges go with their op, so they are committed together and never dangle.
  return AddRow(tables::kOps, op, &next_.ops, [&] {
    for (int out = 0; out < 2; ++out) {
      const auto& tensors = out ? op.outputs : op.inputs;
      for (size_t i = 0; i < tensors.size(); ++i) {
        Row& e = pending_.Push(RowKind::kOpIo);
        e.v[0] = op.id;
        e.v[1] = tensors[i];
        e.v[2] = static_cast<int64_t>(i);
        e.v[3] = out;
      }
    }
  });
}

Status SqliteRunWriter::Add(const Tensor& t) { return AddRow(tables::kTensors, t, &next_.tensors); }
Status SqliteRunWriter::Add(const Kernel& k) { return AddRow(tables::kKernels, k, &next_.kernels); }
Status SqliteRunWriter::Add(const Transfer& t) { return AddRow(tables::kTransfers, t, &next_.transfers); }
Status SqliteRunWriter::Add(const ApiCall& a) { return AddRow(tables::kApiCalls, a, &next_.api_calls); }
Status SqliteRunWriter::Add(const Range& r) { return AddRow(tables::kRanges, r, &next_.ranges); }
Status SqliteRunWriter::Add(const Frame& f) { return AddRow(tables::kFrames, f, &next_.frames); }

Status SqliteRunWriter::Add(const Stack& s) {
  Lock lock(sync_->mu, std::defer_lock);
  MAGNETON_RETURN_IF_ERROR(Enter(lock));
  MAGNETON_RETURN_IF_ERROR(CheckId("stack", s.id, &next_.stacks));
  Row& r = pending_.Push(RowKind::kStack);
  r.v[0] = s.id;
  r.v[1] = static_cast<int64_t>(s.frames.size());
  for (size_t i = 0; i < s.frames.size(); ++i) {
    Row& f = pending_.Push(RowKind::kStackFrame);
    f.v[0] = s.id;
    f.v[1] = static_cast<int64_t>(i);
    f.v[2] = s.frames[i];
  }
  return Queued(lock);
}

Status SqliteRunWriter::Add(const ReplayMeasurement& m) { return AddRow(tables::kReplays, m, &next_.replays); }

Status SqliteRunWriter::Add(const Stat& s) {
  Lock lock(sync_->mu, std::defer_lock);
  MAGNETON_RETURN_IF_ERROR(Enter(lock));
  const int64_t name = pending_.Text(s.name), severity = pending_.Text(s.severity),
                description = pending_.Text(s.description);
  Row& r = pending_.Push(RowKind::kStat);
  int64_t values[] = {name, severity, s.value, description};
  std::copy(std::begin(values), std::end(values), r.v);
  return Queued(lock);
}

Status SqliteRunWriter::AddSeries(const SensorSeries& s) {
  Lock lock(sync_->mu, std::defer_lock);
  MAGNETON_RETURN_IF_ERROR(Enter(lock));
  if (s.t_ns.size() != s.value.size())
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("{}: series {} has {} times but {} values", path_,
                                                              s.id, s.t_ns.size(), s.value.size()));
  MAGNETON_RETURN_IF_ERROR(CheckId(tables::kSeries.noun, s.id, &next_.series));
  Put(tables::kSeries, s);
  for (size_t i = 0; i < s.t_ns.size(); ++i) {
    Row& p = pending_.Push(RowKind::kSample);
    p.v[0] = s.id;
    p.v[1] = s.t_ns[i];
    p.v[2] = Bits(s.value[i]);
    MAGNETON_RETURN_IF_ERROR(Queued(lock));
  }
  return Queued(lock);
}

Status SqliteRunWriter::AddSample(int64_t series_id, int64_t t_ns, double value) {
  Lock lock(sync_->mu, std::defer_lock);
  MAGNETON_RETURN_IF_ERROR(Enter(lock));
  MAGNETON_RETURN_IF_ERROR(CheckRef("series", series_id, next_.series));
  Row& r = pending_.Push(RowKind::kSample);
  r.v[0] = series_id;
  r.v[1] = t_ns;
  r.v[2] = Bits(value);
  return Queued(lock);
}

Status SqliteRunWriter::SetConfig(const std::string& key, const std::string& value) {
  Lock lock(sync_->mu, std::defer_lock);
  MAGNETON_RETURN_IF_ERROR(Enter(lock));
  PutText(RowKind::kConfig, key, value);
  return Queued(lock);
}

Status SqliteRunWriter::Link(RowKind kind, const char* what, int64_t id, const int64_t* count, int64_t op_id) {
  Lock lock(sync_->mu, std::defer_lock);
  MAGNETON_RETURN_IF_ERROR(Enter(lock));
  MAGNETON_RETURN_IF_ERROR(CheckRef(what, id, *count));
  Row& r = pending_.Push(kind);
  r.v[0] = op_id;
  r.v[1] = id;
  return Queued(lock);
}

Status SqliteRunWriter::LinkKernel(int64_t kernel_id, int64_t op_id) {
  return Link(RowKind::kLinkKernel, "kernel", kernel_id, &next_.kernels, op_id);
}

Status SqliteRunWriter::LinkTransfer(int64_t transfer_id, int64_t op_id) {
  return Link(RowKind::kLinkTransfer, "transfer", transfer_id, &next_.transfers, op_id);
}

void RemoveRunFiles(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) unlink((path + suffix).c_str());
}

}  // namespace

Result<std::unique_ptr<RunWriter>> RunWriter::Create(const std::string& path, const RunInfo& info,
                                                     bool overwrite) {
  if (access(path.c_str(), F_OK) == 0) {
    if (!overwrite)
      return MakeError(ErrorCode::kInvalidArgument, fmt::format("{}: already exists; not overwriting it", path));
    RemoveRunFiles(path);
  }
  auto writer = std::make_unique<SqliteRunWriter>(path);
  if (Status st = writer->Open(info); !st.ok()) {
    writer.reset();
    RemoveRunFiles(path);  // no half-made file is left behind
    return st.error();
  }
  return std::unique_ptr<RunWriter>(std::move(writer));
}

}  // namespace magneton
