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
  Status Dense(const char* table, int64_t id, size_t index) const {
    if (id == static_cast<int64_t>(index)) return Status::Ok();
    return Corrupt(fmt::format("{} id {} at row {}; ids must be dense", table, id, index));
  }
  // The interned string `id`, copied into *out.
  Status Str(int64_t id, const char* table, std::string* out) const {
    if (id < 0 || id >= static_cast<int64_t>(strings_.size()))
      return Corrupt(fmt::format("{} names string {}, which does not exist", table, id));
    *out = strings_[id];
    return Status::Ok();
  }
  // An interned string or "" for -1 (a column an older file lacks).
  Status OptStr(int64_t id, const char* table, std::string* out) const {
    if (id == -1) {
      out->clear();
      return Status::Ok();
    }
    return Str(id, table, out);
  }
  // Rows in `table`, to size vectors once (bounded by the file's real rows).
  size_t Count(const char* table);
  // A column added in schema 1.`minor`: files of an older minor lack it and
  // read `fallback` (its default) instead; newer files must have it.
  std::string Since(int minor, const char* column, const char* fallback) const {
    return schema_minor_ >= minor ? std::string(column) : fmt::format("{} AS {}", fallback, column);
  }
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

  Status Strings();
  Status Devices();
  Status FramesAndStacks();
  Status Tensors();
  Status Ops();
  Status Kernels();
  Status Transfers();
  Status ApiCalls();
  Status Ranges();
  Status Series();
  Status ConfigReplaysStats();
  void CheckReferences();

  const std::string& path_;
  const sqlite::Db& db_;
  const int schema_minor_;
  Run& run_;
  std::vector<std::string> strings_;
};

size_t RunLoader::Count(const char* table) {
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

Status RunLoader::Devices() {
  return Scan("SELECT id, kind, name, uuid, ordinal, memory_bytes FROM devices", [&](Stmt& q) -> Status {
    MAGNETON_RETURN_IF_ERROR(Dense("devices", q.Int64(0), run_.devices.size()));
    Device& d = run_.devices.emplace_back();
    d.id = static_cast<int32_t>(q.Int64(0));
    d.kind = q.Text(1);
    d.name = q.Text(2);
    d.uuid = q.Text(3);
    d.ordinal = static_cast<int32_t>(q.Int64(4));
    d.memory_bytes = q.Int64(5);
    return Status::Ok();
  });
}

Status RunLoader::FramesAndStacks() {
  run_.frames.reserve(Count("frames"));
  MAGNETON_RETURN_IF_ERROR(Scan("SELECT id, kind, function, file, line, module FROM frames", [&](Stmt& q) -> Status {
    MAGNETON_RETURN_IF_ERROR(Dense("frames", q.Int64(0), run_.frames.size()));
    Frame& f = run_.frames.emplace_back();
    f.id = q.Int64(0);
    MAGNETON_RETURN_IF_ERROR(Str(q.Int64(1), "frames", &f.kind));
    MAGNETON_RETURN_IF_ERROR(Str(q.Int64(2), "frames", &f.function));
    MAGNETON_RETURN_IF_ERROR(Str(q.Int64(3), "frames", &f.file));
    f.line = static_cast<int32_t>(q.Int64(4));
    return Str(q.Int64(5), "frames", &f.module);
  }));
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

Status RunLoader::Tensors() {
  run_.tensors.reserve(Count("tensors"));
  return Scan(
      fmt::format("SELECT id, storage, storage_offset, version, shape, strides, dtype, device, fingerprint, {} "
                  "FROM tensors",
                  Since(2, "memory", "-1")),
      [&](Stmt& q) -> Status {
        MAGNETON_RETURN_IF_ERROR(Dense("tensors", q.Int64(0), run_.tensors.size()));
        Tensor& t = run_.tensors.emplace_back();
        t.id = q.Int64(0);
        t.storage = q.Int64(1);
        t.offset = q.Int64(2);
        t.version = q.Int64(3);
        if (!ParseInts(q.Text(4), &t.shape) || !ParseInts(q.Text(5), &t.strides))
          return Corrupt(fmt::format("tensor {} has a malformed shape or strides", t.id));
        MAGNETON_RETURN_IF_ERROR(Str(q.Int64(6), "tensors", &t.dtype));
        t.device = static_cast<int32_t>(q.Int64(7));
        if (!q.IsNull(8)) {
          auto fp = DecodeFingerprint(q.Blob(8));
          if (!fp) return Corrupt(fmt::format("tensor {}: {}", t.id, fp.error().message));
          t.fingerprint = std::move(*fp);
        }
        return OptStr(q.Int64(9), "tensors", &t.memory);
      });
}

Status RunLoader::Ops() {
  run_.ops.reserve(Count("ops"));
  MAGNETON_RETURN_IF_ERROR(Scan(
      fmt::format("SELECT id, parent, name, op_schema, framework, sequence, forward_op, thread, start_ns, end_ns, "
                  "stack, device, {} FROM ops",
                  Since(2, "args", "-1")),
      [&](Stmt& q) -> Status {
        MAGNETON_RETURN_IF_ERROR(Dense("ops", q.Int64(0), run_.ops.size()));
        Op& o = run_.ops.emplace_back();
        o.id = q.Int64(0);
        o.parent = q.Int64(1);
        MAGNETON_RETURN_IF_ERROR(Str(q.Int64(2), "ops", &o.name));
        MAGNETON_RETURN_IF_ERROR(Str(q.Int64(3), "ops", &o.schema));
        MAGNETON_RETURN_IF_ERROR(Str(q.Int64(4), "ops", &o.framework));
        o.sequence = q.Int64(5);
        o.forward_op = q.Int64(6);
        o.thread = q.Int64(7);
        o.start_ns = q.Int64(8);
        o.end_ns = q.Int64(9);
        o.stack = q.Int64(10);
        o.device = static_cast<int32_t>(q.Int64(11));
        return OptStr(q.Int64(12), "ops", &o.args);
      }));
  // Edges are written with their op, in argument order.
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

Status RunLoader::Kernels() {
  run_.kernels.reserve(Count("kernels"));
  return Scan(
      "SELECT id, name, device, stream, start_ns, end_ns, grid_x, grid_y, grid_z, block_x, block_y, block_z, "
      "registers, static_smem, dynamic_smem, correlation, op, stack FROM kernels",
      [&](Stmt& q) -> Status {
        MAGNETON_RETURN_IF_ERROR(Dense("kernels", q.Int64(0), run_.kernels.size()));
        Kernel& k = run_.kernels.emplace_back();
        k.id = q.Int64(0);
        MAGNETON_RETURN_IF_ERROR(Str(q.Int64(1), "kernels", &k.name));
        k.device = static_cast<int32_t>(q.Int64(2));
        k.stream = q.Int64(3);
        k.start_ns = q.Int64(4);
        k.end_ns = q.Int64(5);
        for (int i = 0; i < 3; ++i) {
          k.grid[i] = static_cast<int32_t>(q.Int64(6 + i));
          k.block[i] = static_cast<int32_t>(q.Int64(9 + i));
        }
        k.registers = static_cast<int32_t>(q.Int64(12));
        k.static_smem = static_cast<int32_t>(q.Int64(13));
        k.dynamic_smem = static_cast<int32_t>(q.Int64(14));
        k.correlation = q.Int64(15);
        k.op = q.Int64(16);
        k.stack = q.Int64(17);
        return Status::Ok();
      });
}

Status RunLoader::Transfers() {
  run_.transfers.reserve(Count("transfers"));
  return Scan(fmt::format("SELECT id, kind, bytes, device, stream, start_ns, end_ns, correlation, op, {}, {}, {} "
                          "FROM transfers",
                          Since(2, "src_memory", "-1"), Since(2, "dst_memory", "-1"),
                          Since(2, "synchronous", "0")),
              [&](Stmt& q) -> Status {
                MAGNETON_RETURN_IF_ERROR(Dense("transfers", q.Int64(0), run_.transfers.size()));
                Transfer& t = run_.transfers.emplace_back();
                t.id = q.Int64(0);
                MAGNETON_RETURN_IF_ERROR(Str(q.Int64(1), "transfers", &t.kind));
                t.bytes = q.Int64(2);
                t.device = static_cast<int32_t>(q.Int64(3));
                t.stream = q.Int64(4);
                t.start_ns = q.Int64(5);
                t.end_ns = q.Int64(6);
                t.correlation = q.Int64(7);
                t.op = q.Int64(8);
                t.synchronous = q.Int64(11) != 0;
                MAGNETON_RETURN_IF_ERROR(OptStr(q.Int64(9), "transfers", &t.src_memory));
                return OptStr(q.Int64(10), "transfers", &t.dst_memory);
              });
}

Status RunLoader::ApiCalls() {
  run_.api_calls.reserve(Count("api_calls"));
  // Files of schema 1.0 have no count: one row, one call.
  return Scan(fmt::format("SELECT id, name, domain, thread, start_ns, end_ns, correlation, stack, {} FROM api_calls",
                          Since(1, "count", "1")),
              [&](Stmt& q) -> Status {
                MAGNETON_RETURN_IF_ERROR(Dense("api_calls", q.Int64(0), run_.api_calls.size()));
                ApiCall& a = run_.api_calls.emplace_back();
                a.id = q.Int64(0);
                MAGNETON_RETURN_IF_ERROR(Str(q.Int64(1), "api_calls", &a.name));
                MAGNETON_RETURN_IF_ERROR(Str(q.Int64(2), "api_calls", &a.domain));
                a.thread = q.Int64(3);
                a.start_ns = q.Int64(4);
                a.end_ns = q.Int64(5);
                a.correlation = q.Int64(6);
                a.stack = q.Int64(7);
                a.count = q.Int64(8);
                if (a.count < 1) return Corrupt(fmt::format("api call {} stands for {} calls", a.id, a.count));
                return Status::Ok();
              });
}

Status RunLoader::Ranges() {
  run_.ranges.reserve(Count("ranges"));
  return Scan("SELECT id, name, domain, thread, start_ns, end_ns, parent FROM ranges", [&](Stmt& q) -> Status {
    MAGNETON_RETURN_IF_ERROR(Dense("ranges", q.Int64(0), run_.ranges.size()));
    Range& r = run_.ranges.emplace_back();
    r.id = q.Int64(0);
    MAGNETON_RETURN_IF_ERROR(Str(q.Int64(1), "ranges", &r.name));
    MAGNETON_RETURN_IF_ERROR(Str(q.Int64(2), "ranges", &r.domain));
    r.thread = q.Int64(3);
    r.start_ns = q.Int64(4);
    r.end_ns = q.Int64(5);
    r.parent = q.Int64(6);
    return Status::Ok();
  });
}

Status RunLoader::Series() {
  MAGNETON_RETURN_IF_ERROR(Scan("SELECT id, device, sensor, unit, source FROM series", [&](Stmt& q) -> Status {
    MAGNETON_RETURN_IF_ERROR(Dense("series", q.Int64(0), run_.series.size()));
    SensorSeries& s = run_.series.emplace_back();
    s.id = q.Int64(0);
    s.device = static_cast<int32_t>(q.Int64(1));
    MAGNETON_RETURN_IF_ERROR(Str(q.Int64(2), "series", &s.sensor));
    MAGNETON_RETURN_IF_ERROR(Str(q.Int64(3), "series", &s.unit));
    return Str(q.Int64(4), "series", &s.source);
  }));
  return Scan("SELECT series, t_ns, value FROM samples", [&](Stmt& q) -> Status {
    int64_t series = q.Int64(0);
    if (series < 0 || series >= static_cast<int64_t>(run_.series.size()))
      return Corrupt(fmt::format("sample of missing series {}", series));
    run_.series[series].t_ns.push_back(q.Int64(1));
    run_.series[series].value.push_back(q.Double(2));
    return Status::Ok();
  });
}

Status RunLoader::ConfigReplaysStats() {
  MAGNETON_RETURN_IF_ERROR(Scan("SELECT key, value FROM config", [&](Stmt& q) -> Status {
    run_.config.insert_or_assign(std::string(q.Text(0)), std::string(q.Text(1)));
    return Status::Ok();
  }));
  MAGNETON_RETURN_IF_ERROR(Scan(
      "SELECT id, op, key, device, calls, repeats, seconds_per_call, joules_per_call, idle_watts, cv, status "
      "FROM replays",
      [&](Stmt& q) -> Status {
        MAGNETON_RETURN_IF_ERROR(Dense("replays", q.Int64(0), run_.replays.size()));
        ReplayMeasurement& m = run_.replays.emplace_back();
        m.id = q.Int64(0);
        m.op = q.Int64(1);
        m.key = q.Text(2);
        m.device = static_cast<int32_t>(q.Int64(3));
        m.calls = q.Int64(4);
        m.repeats = static_cast<int32_t>(q.Int64(5));
        m.seconds_per_call = q.Double(6);
        m.joules_per_call = q.Double(7);
        m.idle_watts = q.Double(8);
        m.cv = q.Double(9);
        m.status = q.Text(10);
        return Status::Ok();
      }));
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
  MAGNETON_RETURN_IF_ERROR(Devices());
  MAGNETON_RETURN_IF_ERROR(FramesAndStacks());
  MAGNETON_RETURN_IF_ERROR(Tensors());
  MAGNETON_RETURN_IF_ERROR(Ops());
  MAGNETON_RETURN_IF_ERROR(Kernels());
  MAGNETON_RETURN_IF_ERROR(Transfers());
  MAGNETON_RETURN_IF_ERROR(ApiCalls());
  MAGNETON_RETURN_IF_ERROR(Ranges());
  MAGNETON_RETURN_IF_ERROR(Series());
  MAGNETON_RETURN_IF_ERROR(ConfigReplaysStats());
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
