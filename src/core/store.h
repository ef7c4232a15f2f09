// The run store: one SQLite file per recorded run (.mgt). Schema and its
// versioning are described in docs/run-format.md.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "core/run.h"
#include "core/status.h"

namespace magneton {

// Schema version written by this build. A reader accepts any file with the same
// major version (minor additions are backward compatible) and refuses a newer
// major with a clear message. Minor versions: docs/run-format.md, "Versioning".
inline constexpr int kSchemaMajor = 1;
inline constexpr int kSchemaMinor = 2;

// Streams a run into a store. Add validates a row and queues it; the store's
// writer thread inserts queued rows in transactions, committed whenever a
// second has passed since the last commit (and on Flush/Close), so a killed
// workload loses at most its last second. Errors of the writer thread are
// returned by the next call. Not thread-safe: callers serialize. A writer
// belongs to the process that created it: in a fork()ed child every call
// fails. Ids of added rows must be dense and in order (see run.h).
class RunWriter {
 public:
  // Creates `path`. Refuses to overwrite an existing file unless `overwrite`.
  static Result<std::unique_ptr<RunWriter>> Create(const std::string& path, const RunInfo& info,
                                                   bool overwrite = false);
  virtual ~RunWriter() = default;

  virtual Status SetInfo(const RunInfo& info) = 0;  // rewrites the run metadata (e.g. end_ns)
  virtual Status Add(const Device& d) = 0;
  virtual Status Add(const Op& op) = 0;             // with its inputs/outputs edges
  virtual Status Add(const Tensor& t) = 0;
  virtual Status Add(const Kernel& k) = 0;
  virtual Status Add(const Transfer& t) = 0;
  virtual Status Add(const ApiCall& a) = 0;
  virtual Status Add(const Range& r) = 0;
  virtual Status Add(const Frame& f) = 0;
  virtual Status Add(const Stack& s) = 0;
  virtual Status Add(const ReplayMeasurement& m) = 0;
  virtual Status Add(const Stat& s) = 0;            // adds to an existing stat of that name
  // A series is declared once, then appended to.
  virtual Status AddSeries(const SensorSeries& s) = 0;  // id, device, sensor, unit, source, and any points
  virtual Status AddSample(int64_t series_id, int64_t t_ns, double value) = 0;
  virtual Status SetConfig(const std::string& key, const std::string& value) = 0;
  // Links an already written kernel/transfer to an op (late correlation).
  virtual Status LinkKernel(int64_t kernel_id, int64_t op_id) = 0;
  virtual Status LinkTransfer(int64_t transfer_id, int64_t op_id) = 0;

  // Rows added between HoldCommits(true) and HoldCommits(false) reach the
  // file in one commit: a recording killed meanwhile keeps all of them or
  // none (one execution of a function, say). Holds nest; Flush commits anyway.
  virtual void HoldCommits(bool hold) = 0;

  virtual Status Flush() = 0;
  virtual Status Close() = 0;  // flushes; the writer is unusable after
};

// Holds a writer's commits for its lifetime (RunWriter::HoldCommits).
class CommitGroup {
 public:
  explicit CommitGroup(RunWriter& w) : w_(w) { w_.HoldCommits(true); }
  ~CommitGroup() { w_.HoldCommits(false); }
  CommitGroup(const CommitGroup&) = delete;
  CommitGroup& operator=(const CommitGroup&) = delete;

 private:
  RunWriter& w_;
};

// A RunWriter that passes every call on to `inner`, holding `mu` around it
// where one is given (a writer shared between threads). Subclasses override
// the calls they look at and pass those on through Call and inner(). Close
// does not close `inner`: its owner does.
class ForwardingRunWriter : public RunWriter {
 public:
  explicit ForwardingRunWriter(RunWriter* inner, std::mutex* mu = nullptr) : inner_(inner), mu_(mu) {}

  Status SetInfo(const RunInfo& info) override { return Call([&] { return inner_->SetInfo(info); }); }
  Status Add(const Device& d) override { return Call([&] { return inner_->Add(d); }); }
  Status Add(const Op& op) override { return Call([&] { return inner_->Add(op); }); }
  Status Add(const Tensor& t) override { return Call([&] { return inner_->Add(t); }); }
  Status Add(const Kernel& k) override { return Call([&] { return inner_->Add(k); }); }
  Status Add(const Transfer& t) override { return Call([&] { return inner_->Add(t); }); }
  Status Add(const ApiCall& a) override { return Call([&] { return inner_->Add(a); }); }
  Status Add(const Range& r) override { return Call([&] { return inner_->Add(r); }); }
  Status Add(const Frame& f) override { return Call([&] { return inner_->Add(f); }); }
  Status Add(const Stack& s) override { return Call([&] { return inner_->Add(s); }); }
  Status Add(const ReplayMeasurement& m) override { return Call([&] { return inner_->Add(m); }); }
  Status Add(const Stat& s) override { return Call([&] { return inner_->Add(s); }); }
  Status AddSeries(const SensorSeries& s) override { return Call([&] { return inner_->AddSeries(s); }); }
  Status AddSample(int64_t series_id, int64_t t_ns, double value) override {
    return Call([&] { return inner_->AddSample(series_id, t_ns, value); });
  }
  Status SetConfig(const std::string& key, const std::string& value) override {
    return Call([&] { return inner_->SetConfig(key, value); });
  }
  Status LinkKernel(int64_t kernel_id, int64_t op_id) override {
    return Call([&] { return inner_->LinkKernel(kernel_id, op_id); });
  }
  Status LinkTransfer(int64_t transfer_id, int64_t op_id) override {
    return Call([&] { return inner_->LinkTransfer(transfer_id, op_id); });
  }
  void HoldCommits(bool hold) override {
    (void)Call([&] {
      inner_->HoldCommits(hold);
      return Status::Ok();
    });
  }
  Status Flush() override { return Call([&] { return inner_->Flush(); }); }
  Status Close() override { return Status::Ok(); }

 protected:
  RunWriter* inner() const { return inner_; }
  // f(), under the lock where there is one.
  template <class F>
  Status Call(F&& f) {
    if (!mu_) return f();
    std::lock_guard<std::mutex> lock(*mu_);
    return f();
  }

 private:
  RunWriter* inner_;
  std::mutex* mu_;
};

// Writes a whole in-memory Run (tests, converters, replay results).
Status SaveRun(const Run& run, const std::string& path, bool overwrite = false);

// Loads a run file into memory. Errors name the file: missing, not a run file,
// truncated/corrupt, newer schema.
Result<Run> LoadRun(const std::string& path);

// Reads only the schema version and RunInfo (fast; for `info` and listings).
struct StoreHeader {
  int schema_major = 0, schema_minor = 0;
  RunInfo info;
};
Result<StoreHeader> ReadHeader(const std::string& path);

// Adds replay measurements to an existing run file (the replay pass).
Status AppendReplays(const std::string& path, const std::vector<ReplayMeasurement>& replays);

}  // namespace magneton
