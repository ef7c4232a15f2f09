// LoadRun and ReadHeader: a run file into memory, checked on the way.
//
// The file may be damaged or hostile (tests/fuzz feeds it random bytes), so
// nothing read is trusted: ids must be dense (id == row index), rows that
// belong to a parent (op_io, stack_frames, samples) must point at an existing
// one, and every count is checked before it sizes an allocation. References
// between rows that a killed writer could leave dangling (a kernel naming an
// op that was never committed) are set to kNone and counted in the stat
// "store.dangling_references" instead of failing the whole load.
#include <charconv>

#include <fmt/core.h>

#include "core/fingerprint_codec.h"
#include "core/schema.h"
#include "core/stats_registry.h"
#include "core/store.h"
#include "core/store_open.h"
#include "core/tables.h"

namespace magneton {
namespace {

using sqlite::Stmt;

class RunLoader {
 public:
  RunLoader(const std::string& path, const sqlite::Db& db, int schema_minor, Run* run)
      : path_(path), db_(db), schema_minor_(schema_minor), run_(*run) {}

  Status Load();

 private:
  Error Corrupt(std::string_view what) const {
    return MakeError(ErrorCode::kCorrupt, fmt::format("{}: corrupt run file ({})", path_, what));
  }
  Status Dense(std::string_view table, int64_t id, size_t index) const {
    if (id == static_cast<int64_t>(index)) return Status::Ok();
    return Corrupt(fmt::format("{} id {} at row {}; ids must be dense", table, id, index));
  }
  // The interned string `id`, copied into *out.
  Status Str(int64_t id, std::string_view table, std::string* out) const {
    if (id < 0 || id >= static_cast<int64_t>(strings_.size()))
      return Corrupt(fmt::format("{} names string {}, which does not exist", table, id));
    *out = strings_[id];
    return Status::Ok();
  }
  // Rows in `table`, to size vectors once (bounded by the file's real rows).
  size_t Count(std::string_view table);
  // Prepares `sql`, then calls row(stmt) for each result row.
  template <class RowFn>
  Status Scan(std::string_view sql, RowFn&& row) {
    Stmt q;
    MAGNETON_RETURN_IF_ERROR(store::PrepareForRead(db_, path_, &q, sql));
    int rc;
    while ((rc = q.Step()) == SQLITE_ROW) MAGNETON_RETURN_IF_ERROR(row(q));
    if (rc != SQLITE_DONE) return store::ReadError(db_, path_, rc);
    return Status::Ok();
  }

  // Reads `table` (tables.h) into *rows, then check(row) on each. Columns
  // added after the file's minor are not read: their members keep their
  // defaults; a column of the file's minor or older must be there.
  template <class T, class Check>
  Status Rows(const T& table, std::vector<typename T::Row>* rows, Check&& check);
  template <class T>
  Status Rows(const T& table, std::vector<typename T::Row>* rows) {
    return Rows(table, rows, [](const auto&) { return Status::Ok(); });
  }
  // One column's value at `at` of `q` into its member of `row`, the row at `index`.
  template <class T, class C>
  Status Decode(const T& table, const C& column, const Stmt& q, int at, size_t index, typename T::Row& row) const;

  Status Strings();
  Status Stacks();
  Status OpIo();
  Status Samples();
  Status Config();
  Status Stats();
  void CheckReferences();

  const std::string& path_;
  const sqlite::Db& db_;
  const int schema_minor_;
  Run& run_;
  std::vector<std::string> strings_;
};

size_t RunLoader::Count(std::string_view table) {
  Stmt q;
  if (q.Prepare(db_, fmt::format("SELECT count(*) FROM {}", table)) != SQLITE_OK || q.Step() != SQLITE_ROW)
    return 0;  // the scan that follows reports the error
  return static_cast<size_t>(std::max<int64_t>(0, q.Int64(0)));
}

Status RunLoader::Strings() {
  strings_.reserve(Count("strings"));
  return Scan("SELECT id, value FROM strings", [&](Stmt& q) -> Status {
    MAGNETON_RETURN_IF_ERROR(Dense("strings", q.Int64(0), strings_.size()));
    strings_.emplace_back(q.Text(1));
    return Status::Ok();
  });
}

// "2,3,4" -> {2,3,4}; "" -> {} (a scalar).
bool ParseInts(std::string_view s, std::vector<int64_t>* out) {
  out->clear();
  if (s.empty()) return true;
  const char* p = s.data();
  const char* end = p + s.size();
  while (true) {
    int64_t v;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) return false;
    out->push_back(v);
    if (next == end) return true;
    if (*next != ',') return false;
    p = next + 1;
  }
}

template <class T, class C>
Status RunLoader::Decode(const T& table, const C& column, const Stmt& q, int at, size_t index,
                         typename T::Row& row) const {
  using tables::Codec;
  constexpr Codec codec = tables::kCodecOf<C>;
  auto& m = column.Of(row);
  using Member = std::remove_cvref_t<decltype(m)>;
  if constexpr (codec == Codec::kId) {
    m = static_cast<Member>(q.Int64(at));
    return Dense(table.name, q.Int64(at), index);
  } else if constexpr (codec == Codec::kInt) {
    m = static_cast<Member>(q.Int64(at));
  } else if constexpr (codec == Codec::kBool) {
    m = q.Int64(at) != 0;
  } else if constexpr (codec == Codec::kReal) {
    m = q.Double(at);
  } else if constexpr (codec == Codec::kName) {
    return Str(q.Int64(at), table.name, &m);
  } else if constexpr (codec == Codec::kText) {
    m = q.Text(at);
  } else if constexpr (codec == Codec::kInts) {
    if (!ParseInts(q.Text(at), &m))
      return Corrupt(fmt::format("{} {} has a malformed {}", table.noun, row.id, column.name));
  } else if constexpr (codec == Codec::kFingerprint) {
    if (!q.IsNull(at)) {
      auto fp = DecodeFingerprint(q.Blob(at));
      if (!fp) return Corrupt(fmt::format("{} {}: {}", table.noun, row.id, fp.error().message));
      m = std::move(*fp);
    }
  }
  return Status::Ok();
}

template <class T, class Check>
Status RunLoader::Rows(const T& table, std::vector<typename T::Row>* rows, Check&& check) {
  rows->reserve(Count(table.name));
  return Scan(tables::SelectSql(table.name, table.info, schema_minor_), [&](Stmt& q) -> Status {
    const size_t index = rows->size();
    auto& row = rows->emplace_back();
    Status st;
    int at = 0;
    tables::AllColumns(table, [&](const auto& c) {
      if (c.since > schema_minor_) return true;
      st = Decode(table, c, q, at++, index, row);
      return st.ok();
    });
    MAGNETON_RETURN_IF_ERROR(st);
    return check(row);
  });
}

Status RunLoader::Stacks() {
  std::vector<int64_t> depth;
  run_.stacks.reserve(Count("stacks"));
  MAGNETON_RETURN_IF_ERROR(Scan("SELECT id, depth FROM stacks", [&](Stmt& q) -> Status {
    MAGNETON_RETURN_IF_ERROR(Dense("stacks", q.Int64(0), run_.stacks.size()));
    run_.stacks.emplace_back().id = q.Int64(0);
    depth.push_back(q.Int64(1));
    return Status::Ok();
  }));
  // A stack and its frames are written in one transaction: positions are
  // dense per stack and the count matches stacks.depth.
  MAGNETON_RETURN_IF_ERROR(Scan("SELECT stack, position, frame FROM stack_frames", [&](Stmt& q) -> Status {
    int64_t stack = q.Int64(0);
    if (stack < 0 || stack >= static_cast<int64_t>(run_.stacks.size()))
      return Corrupt(fmt::format("stack_frames row for missing stack {}", stack));
    auto& frames = run_.stacks[stack].frames;
    if (q.Int64(1) != static_cast<int64_t>(frames.size()))
      return Corrupt(fmt::format("stack {} frame position {} out of order", stack, q.Int64(1)));
    frames.push_back(q.Int64(2));
    return Status::Ok();
  }));
  for (size_t i = 0; i < run_.stacks.size(); ++i)
    if (static_cast<int64_t>(run_.stacks[i].frames.size()) != depth[i])
      return Corrupt(fmt::format("stack {} has {} frames, stacks.depth says {}", i, run_.stacks[i].frames.size(),
                                 depth[i]));
  return Status::Ok();
}

// Edges are written with their op, in argument order.
Status RunLoader::OpIo() {
  return Scan("SELECT op, tensor, position, is_output FROM op_io", [&](Stmt& q) -> Status {
    int64_t op = q.Int64(0);
    if (op < 0 || op >= static_cast<int64_t>(run_.ops.size()))
      return Corrupt(fmt::format("op_io row for missing op {}", op));
    auto& list = q.Int64(3) ? run_.ops[op].outputs : run_.ops[op].inputs;
    if (q.Int64(2) != static_cast<int64_t>(list.size()))
      return Corrupt(fmt::format("op {} argument position {} out of order", op, q.Int64(2)));
    list.push_back(q.Int64(1));
    return Status::Ok();
  });
}

Status RunLoader::Samples() {
  return Scan("SELECT series, t_ns, value FROM samples", [&](Stmt& q) -> Status {
    int64_t series = q.Int64(0);
    if (series < 0 || series >= static_cast<int64_t>(run_.series.size()))
      return Corrupt(fmt::format("sample of missing series {}", series));
    run_.series[series].t_ns.push_back(q.Int64(1));
    run_.series[series].value.push_back(q.Double(2));
    return Status::Ok();
  });
}

Status RunLoader::Config() {
  return Scan("SELECT key, value FROM config", [&](Stmt& q) -> Status {
    run_.config.insert_or_assign(std::string(q.Text(0)), std::string(q.Text(1)));
    return Status::Ok();
  });
}

Status RunLoader::Stats() {
  return Scan("SELECT name, severity, value, description FROM stats ORDER BY id", [&](Stmt& q) -> Status {
    run_.stats.push_back(Stat{std::string(q.Text(0)), std::string(q.Text(1)), q.Int64(2), std::string(q.Text(3))});
    return Status::Ok();
  });
}

// Sets references that point outside their table to kNone and counts them.
void RunLoader::CheckReferences() {
  int64_t dangling = 0;
  auto ref = [&](auto& v, size_t n) {
    if (v != kNone && (v < 0 || static_cast<uint64_t>(v) >= n)) {
      v = kNone;
      ++dangling;
    }
  };
  const size_t ops = run_.ops.size(), tensors = run_.tensors.size(), stacks = run_.stacks.size(),
               devices = run_.devices.size(), frames = run_.frames.size();
  for (auto& s : run_.stacks)
    for (auto& f : s.frames) ref(f, frames);
  for (auto& t : run_.tensors) ref(t.device, devices);
  for (auto& o : run_.ops) {
    ref(o.parent, ops);
    ref(o.forward_op, ops);
    ref(o.stack, stacks);
    ref(o.device, devices);
    for (auto& t : o.inputs) ref(t, tensors);
    for (auto& t : o.outputs) ref(t, tensors);
  }
  // The recorder's own device work keeps its mark (run.h).
  auto launcher = [&](int64_t& op) {
    if (op != kRecorderWork) ref(op, ops);
  };
  for (auto& k : run_.kernels) {
    launcher(k.op);
    ref(k.stack, stacks);
    ref(k.device, devices);
  }
  for (auto& t : run_.transfers) {
    launcher(t.op);
    ref(t.device, devices);
  }
  for (auto& a : run_.api_calls) ref(a.stack, stacks);
  for (auto& r : run_.ranges) ref(r.parent, run_.ranges.size());
  for (auto& s : run_.series) ref(s.device, devices);
  for (auto& m : run_.replays) {
    ref(m.op, ops);
    ref(m.device, devices);
  }
  if (dangling > 0)
    run_.stats.push_back(MakeStat(stats::kStoreDanglingReferences, dangling));
}

Status RunLoader::Load() {
  auto info = store::ReadRunInfo(db_, path_);
  if (!info) return info.error();
  run_.info = std::move(*info);
  MAGNETON_RETURN_IF_ERROR(Strings());
  MAGNETON_RETURN_IF_ERROR(Rows(tables::kDevices, &run_.devices));
  MAGNETON_RETURN_IF_ERROR(Rows(tables::kFrames, &run_.frames));
  MAGNETON_RETURN_IF_ERROR(Stacks());
  MAGNETON_RETURN_IF_ERROR(Rows(tables::kTensors, &run_.tensors));
  MAGNETON_RETURN_IF_ERROR(Rows(tables::kOps, &run_.ops));
  MAGNETON_RETURN_IF_ERROR(OpIo());
  MAGNETON_RETURN_IF_ERROR(Rows(tables::kKernels, &run_.kernels));
  MAGNETON_RETURN_IF_ERROR(Rows(tables::kTransfers, &run_.transfers));
  MAGNETON_RETURN_IF_ERROR(Rows(tables::kApiCalls, &run_.api_calls, [&](const ApiCall& a) -> Status {
    if (a.count < 1) return Corrupt(fmt::format("api call {} stands for {} calls", a.id, a.count));
    return Status::Ok();
  }));
  MAGNETON_RETURN_IF_ERROR(Rows(tables::kRanges, &run_.ranges));
  MAGNETON_RETURN_IF_ERROR(Rows(tables::kSeries, &run_.series));
  MAGNETON_RETURN_IF_ERROR(Samples());
  MAGNETON_RETURN_IF_ERROR(Config());
  MAGNETON_RETURN_IF_ERROR(Rows(tables::kReplays, &run_.replays));
  MAGNETON_RETURN_IF_ERROR(Stats());
  CheckReferences();
  return Status::Ok();
}

}  // namespace

Result<Run> LoadRun(const std::string& path) {
  auto opened = store::OpenStore(path, /*writable=*/false);
  if (!opened) return opened.error();
  // One read transaction: a consistent snapshot even if a writer is still appending.
  int rc = opened->db.Exec("BEGIN");
  if (rc != SQLITE_OK) return store::ReadError(opened->db, path, rc);
  Run run;
  RunLoader loader(path, opened->db, opened->schema_minor, &run);
  MAGNETON_RETURN_IF_ERROR(loader.Load());
  if (!opened->complete)
    run.stats.push_back(MakeStat(stats::kStoreIncomplete, 1));
  return run;
}

Result<StoreHeader> ReadHeader(const std::string& path) {
  auto opened = store::OpenStore(path, /*writable=*/false);
  if (!opened) return opened.error();
  auto info = store::ReadRunInfo(opened->db, path);
  if (!info) return info.error();
  StoreHeader h;
  h.schema_major = opened->schema_major;
  h.schema_minor = opened->schema_minor;
  h.info = std::move(*info);
  return h;
}

}  // namespace magneton
