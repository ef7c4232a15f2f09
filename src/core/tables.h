// The run store's tables whose rows map one to one onto a struct of run.h,
// each declared once: its SQL name and, per column, the SQL name, how the
// value stands for its member (the codec) and the schema minor that added
// it. Everything else is generated from these lists: the CREATE TABLE
// statements (schema.cpp), the INSERT statements and their bind specs and the
// writer's row encoding (store_rows.h), the reader's SELECT and decoding
// (store_reader.cpp) and the Python dicts (capture/torch/run_dict.h). So a
// new column is one line here plus its member in run.h (whose default is what
// files of older minors read) and docs/run-format.md.
//
// Tables of another shape keep their own code: key/value tables (meta,
// run_info, config), strings (the interning), child rows written with their
// parent (op_io, stack_frames, samples), stacks (a depth, not a member) and
// stats (no id member; a name's value adds up).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "core/run.h"

namespace magneton::tables {

// How a column's SQL value stands for its member.
enum class Codec : uint8_t {
  kId,           // INTEGER PRIMARY KEY: the row's dense id
  kInt,          // INTEGER: a number, or a reference to another row (-1 none)
  kBool,         // INTEGER: 0 or 1
  kReal,         // REAL
  kName,         // INTEGER: an id into `strings` (the hot tables hold integers only)
  kText,         // TEXT
  kInts,         // TEXT: integers joined by ',' ("8,16,4"; "" for none)
  kFingerprint,  // BLOB, or NULL for none: fingerprint_codec.h
};

// What generating SQL needs of a column.
struct ColumnInfo {
  std::string_view name;
  Codec codec;
  int since;
};

// A column of the table of `Row` structs, read and written through `member`
// (or one element of an array member, as Kernel::grid).
template <Codec C, class Row, class Member>
struct Column {
  using RowType = Row;
  static constexpr Codec kCodec = C;

  std::string_view name;
  Member Row::*member;
  int element = -1;
  int since = 0;              // schema minor that added it: older files read the member's default
  std::string_view key = {};  // the Python dict key, where it is not the SQL name

  constexpr Column Since(int minor) const {
    Column c = *this;
    c.since = minor;
    return c;
  }
  constexpr Column Key(std::string_view k) const {
    Column c = *this;
    c.key = k;
    return c;
  }
  constexpr std::string_view py_key() const { return key.empty() ? name : key; }
  constexpr ColumnInfo info() const { return {name, C, since}; }

  constexpr auto& Of(Row& r) const {
    if constexpr (std::is_array_v<Member>) return (r.*member)[element];
    else return r.*member;
  }
  constexpr const auto& Of(const Row& r) const {
    if constexpr (std::is_array_v<Member>) return (r.*member)[element];
    else return r.*member;
  }
};

template <class C>
inline constexpr Codec kCodecOf = std::remove_cvref_t<C>::kCodec;

template <class R, class M>
constexpr Column<Codec::kId, R, M> Id(M R::*m) { return {"id", m}; }
template <class R, class M>
constexpr Column<Codec::kInt, R, M> Int(std::string_view name, M R::*m, int element = -1) { return {name, m, element}; }
template <class R, class M>
constexpr Column<Codec::kBool, R, M> Bool(std::string_view name, M R::*m) { return {name, m}; }
template <class R, class M>
constexpr Column<Codec::kReal, R, M> Real(std::string_view name, M R::*m) { return {name, m}; }
template <class R, class M>
constexpr Column<Codec::kName, R, M> Name(std::string_view name, M R::*m) { return {name, m}; }
template <class R, class M>
constexpr Column<Codec::kText, R, M> Text(std::string_view name, M R::*m) { return {name, m}; }
template <class R, class M>
constexpr Column<Codec::kInts, R, M> Ints(std::string_view name, M R::*m) { return {name, m}; }
template <class R, class M>
constexpr Column<Codec::kFingerprint, R, M> FingerprintBlob(std::string_view name, M R::*m) { return {name, m}; }

template <class R, class... Cols>
struct Table {
  using Row = R;
  static constexpr size_t kWidth = sizeof...(Cols);
  std::string_view name;  // the SQL table
  std::string_view noun;  // one row, in messages: "api call"
  std::tuple<Cols...> columns;
  std::array<ColumnInfo, kWidth> info;  // the same columns, for generating SQL
};

template <class First, class... Rest>
constexpr auto MakeTable(std::string_view name, std::string_view noun, First first, Rest... rest) {
  using Row = typename First::RowType;
  static_assert((std::is_same_v<Row, typename Rest::RowType> && ...), "a table's columns are of one struct");
  return Table<Row, First, Rest...>{name, noun, {first, rest...}, {first.info(), rest.info()...}};
}

// Calls f(column) for each column, in table order.
template <class T, class F>
constexpr void ForEachColumn(const T& table, F&& f) {
  std::apply([&](const auto&... c) { (f(c), ...); }, table.columns);
}

// Calls f(column) in table order while it returns true; whether all did.
template <class T, class F>
constexpr bool AllColumns(const T& table, F&& f) {
  return std::apply([&](const auto&... c) { return (f(c) && ...); }, table.columns);
}

inline constexpr auto kDevices =
    MakeTable("devices", "device", Id(&Device::id), Text("kind", &Device::kind), Text("name", &Device::name),
              Text("uuid", &Device::uuid), Int("ordinal", &Device::ordinal),
              Int("memory_bytes", &Device::memory_bytes));

// op_io (Op::inputs, Op::outputs) is written and read with its op.
inline constexpr auto kOps = MakeTable(
    "ops", "op", Id(&Op::id), Int("parent", &Op::parent), Name("name", &Op::name),
    Name("op_schema", &Op::schema).Key("schema"), Name("framework", &Op::framework),
    Int("sequence", &Op::sequence), Int("forward_op", &Op::forward_op), Int("thread", &Op::thread),
    Int("start_ns", &Op::start_ns), Int("end_ns", &Op::end_ns), Int("stack", &Op::stack),
    Int("device", &Op::device), Name("args", &Op::args).Since(2));

inline constexpr auto kTensors = MakeTable(
    "tensors", "tensor", Id(&Tensor::id), Int("storage", &Tensor::storage),
    Int("storage_offset", &Tensor::offset).Key("offset"), Int("version", &Tensor::version),
    Ints("shape", &Tensor::shape), Ints("strides", &Tensor::strides), Name("dtype", &Tensor::dtype),
    Int("device", &Tensor::device), FingerprintBlob("fingerprint", &Tensor::fingerprint),
    Name("memory", &Tensor::memory).Since(2));

inline constexpr auto kKernels = MakeTable(
    "kernels", "kernel", Id(&Kernel::id), Name("name", &Kernel::name), Int("device", &Kernel::device),
    Int("stream", &Kernel::stream), Int("start_ns", &Kernel::start_ns), Int("end_ns", &Kernel::end_ns),
    Int("grid_x", &Kernel::grid, 0), Int("grid_y", &Kernel::grid, 1), Int("grid_z", &Kernel::grid, 2),
    Int("block_x", &Kernel::block, 0), Int("block_y", &Kernel::block, 1), Int("block_z", &Kernel::block, 2),
    Int("registers", &Kernel::registers), Int("static_smem", &Kernel::static_smem),
    Int("dynamic_smem", &Kernel::dynamic_smem), Int("correlation", &Kernel::correlation), Int("op", &Kernel::op),
    Int("stack", &Kernel::stack));

inline constexpr auto kTransfers = MakeTable(
    "transfers", "transfer", Id(&Transfer::id), Name("kind", &Transfer::kind), Int("bytes", &Transfer::bytes),
    Int("device", &Transfer::device), Int("stream", &Transfer::stream), Int("start_ns", &Transfer::start_ns),
    Int("end_ns", &Transfer::end_ns), Int("correlation", &Transfer::correlation), Int("op", &Transfer::op),
    Name("src_memory", &Transfer::src_memory).Since(2), Name("dst_memory", &Transfer::dst_memory).Since(2),
    Bool("synchronous", &Transfer::synchronous).Since(2));

inline constexpr auto kApiCalls = MakeTable(
    "api_calls", "api call", Id(&ApiCall::id), Name("name", &ApiCall::name), Name("domain", &ApiCall::domain),
    Int("thread", &ApiCall::thread), Int("start_ns", &ApiCall::start_ns), Int("end_ns", &ApiCall::end_ns),
    Int("correlation", &ApiCall::correlation), Int("stack", &ApiCall::stack), Int("count", &ApiCall::count).Since(1));

inline constexpr auto kRanges =
    MakeTable("ranges", "range", Id(&Range::id), Name("name", &Range::name), Name("domain", &Range::domain),
              Int("thread", &Range::thread), Int("start_ns", &Range::start_ns), Int("end_ns", &Range::end_ns),
              Int("parent", &Range::parent));

inline constexpr auto kFrames =
    MakeTable("frames", "frame", Id(&Frame::id), Name("kind", &Frame::kind), Name("function", &Frame::function),
              Name("file", &Frame::file), Int("line", &Frame::line), Name("module", &Frame::module));

// samples (SensorSeries::t_ns, value) are their own rows, written after their series.
inline constexpr auto kSeries = MakeTable("series", "series", Id(&SensorSeries::id),
                                          Int("device", &SensorSeries::device), Name("sensor", &SensorSeries::sensor),
                                          Name("unit", &SensorSeries::unit), Name("source", &SensorSeries::source));

inline constexpr auto kReplays = MakeTable(
    "replays", "replay", Id(&ReplayMeasurement::id), Int("op", &ReplayMeasurement::op),
    Text("key", &ReplayMeasurement::key), Int("device", &ReplayMeasurement::device),
    Int("calls", &ReplayMeasurement::calls), Int("repeats", &ReplayMeasurement::repeats),
    Real("seconds_per_call", &ReplayMeasurement::seconds_per_call),
    Real("joules_per_call", &ReplayMeasurement::joules_per_call), Real("idle_watts", &ReplayMeasurement::idle_watts),
    Real("cv", &ReplayMeasurement::cv), Text("status", &ReplayMeasurement::status));

// Calls f(table) for each table above.
template <class F>
void ForEachTable(F&& f) {
  f(kDevices);
  f(kOps);
  f(kTensors);
  f(kKernels);
  f(kTransfers);
  f(kApiCalls);
  f(kRanges);
  f(kFrames);
  f(kSeries);
  f(kReplays);
}

// SQL of a table from its columns. Older minors' SELECT leaves out the
// columns added since (their members keep their defaults).
std::string CreateTableSql(std::string_view table, std::span<const ColumnInfo> columns);
std::string InsertSql(std::string_view table, std::span<const ColumnInfo> columns);
std::string SelectSql(std::string_view table, std::span<const ColumnInfo> columns, int schema_minor);
// The writer's bind spec (store_rows.h, StatementSpec::params).
std::string BindSpec(std::span<const ColumnInfo> columns);

}  // namespace magneton::tables
