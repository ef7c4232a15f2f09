// The writer's unit of work: rows encoded as fixed-size integer records,
// queued by RunWriter::Add on the caller's thread and inserted into SQLite
// by the store's writer thread (store_sink.h). Encoding a row is a copy of a
// few integers, so a caller (a CUPTI buffer callback) returns quickly.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/fingerprint_codec.h"
#include "core/tables.h"

namespace magneton::store {

// One per prepared statement, in Statements() order.
enum class RowKind : uint8_t {
  kString, kDevice, kOp, kOpIo, kTensor, kKernel, kTransfer, kApiCall, kRange, kFrame, kStack,
  kStackFrame, kSeries, kSample, kConfig, kReplay, kStat, kLinkKernel, kLinkTransfer, kInfoClear,
  kInfoPut, kMetaPut,
  kCount
};

// The kind of a row of each table of tables.h.
template <class Row>
inline constexpr RowKind kRowKindOf = RowKind::kCount;
template <> inline constexpr RowKind kRowKindOf<Device> = RowKind::kDevice;
template <> inline constexpr RowKind kRowKindOf<Op> = RowKind::kOp;
template <> inline constexpr RowKind kRowKindOf<Tensor> = RowKind::kTensor;
template <> inline constexpr RowKind kRowKindOf<Kernel> = RowKind::kKernel;
template <> inline constexpr RowKind kRowKindOf<Transfer> = RowKind::kTransfer;
template <> inline constexpr RowKind kRowKindOf<ApiCall> = RowKind::kApiCall;
template <> inline constexpr RowKind kRowKindOf<Range> = RowKind::kRange;
template <> inline constexpr RowKind kRowKindOf<Frame> = RowKind::kFrame;
template <> inline constexpr RowKind kRowKindOf<SensorSeries> = RowKind::kSeries;
template <> inline constexpr RowKind kRowKindOf<ReplayMeasurement> = RowKind::kReplay;

// How each parameter is bound: 'i' int64, 'd' double (bits in the int64),
// 't' text (index into Batch::texts), 'b' blob (index, or -1 for NULL),
// 'r' a dense row id (INTEGER PRIMARY KEY): bound as NULL after the first row,
// so SQLite appends with rowid max+1 instead of searching the b-tree for the
// id; with ids dense from 0 (RunWriter enforces it) that is the same id, and
// it saves about a fifth of the insert time of a kernel row.
struct StatementSpec {
  std::string sql;
  std::string params;
};

// The statement of each RowKind; those of tables.h's tables are generated.
const std::array<StatementSpec, static_cast<size_t>(RowKind::kCount)>& Statements();

inline constexpr size_t kMaxParams = 18;

struct Row {
  RowKind kind;
  int64_t v[kMaxParams];
};

// Rows in the order they were added, with the texts and blobs they refer to.
struct Batch {
  std::vector<Row> rows;
  std::vector<std::string> texts;

  Row& Push(RowKind kind) {
    Row& r = rows.emplace_back();
    r.kind = kind;
    return r;
  }
  int64_t Text(std::string_view s) {
    texts.emplace_back(s);
    return static_cast<int64_t>(texts.size() - 1);
  }
  int64_t Text(std::string&& s) {
    texts.push_back(std::move(s));
    return static_cast<int64_t>(texts.size() - 1);
  }
  // "2,3,4": compact, and readable in sqlite3.
  int64_t Ints(const std::vector<int64_t>& v) {
    std::string& s = texts.emplace_back();
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) s.push_back(',');
      s += std::to_string(v[i]);
    }
    return static_cast<int64_t>(texts.size() - 1);
  }
  void Clear() {
    rows.clear();
    texts.clear();
  }
  bool empty() const { return rows.empty(); }
};

// Encodes `row` of `table` into v[0..kWidth): texts and blobs go to `batch`,
// names become strings ids through intern(std::string_view). Nothing is
// pushed to batch.rows, so interning may queue string rows first.
template <class T, class Intern>
void EncodeRow(const T& table, const typename T::Row& row, Batch& batch, Intern&& intern, int64_t* v) {
  static_assert(T::kWidth <= kMaxParams, "a row is at most kMaxParams integers");
  using tables::Codec;
  size_t i = 0;
  tables::ForEachColumn(table, [&](const auto& c) {
    constexpr Codec codec = tables::kCodecOf<decltype(c)>;
    const auto& m = c.Of(row);
    if constexpr (codec == Codec::kReal) v[i++] = std::bit_cast<int64_t>(static_cast<double>(m));
    else if constexpr (codec == Codec::kName) v[i++] = intern(std::string_view(m));
    else if constexpr (codec == Codec::kText) v[i++] = batch.Text(std::string_view(m));
    else if constexpr (codec == Codec::kInts) v[i++] = batch.Ints(m);
    else if constexpr (codec == Codec::kFingerprint) v[i++] = m ? batch.Text(EncodeFingerprint(*m)) : -1;
    else v[i++] = static_cast<int64_t>(m);  // kId, kInt, kBool
  });
}

}  // namespace magneton::store
