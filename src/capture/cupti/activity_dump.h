// Raw CUPTI activity records saved to a file and read back, so the record
// processing can be tested on records from real runs on a machine with no GPU.
//
// The tracer writes one when MAGNETON_CUPTI_DUMP=<dir> is set. Records are
// stored byte for byte, except pointer fields: names (kernel, marker, domain,
// device) become ids into a string table that follows in the file, and other
// pointers are zeroed. LoadDump relocates the names to strings it owns, so the
// records it hands out look like live ones.
//
// File layout (little endian):
//   "MGCUPTI1", u32 format version, u32 CUPTI_API_VERSION of the writer
//   frames: u32 type, u32 payload bytes, payload padded to 8 bytes
//     kRecord:  the record (name fields hold string id + 1, 0 for null)
//     kString:  u64 id, the characters
//     kApiName: u32 domain, u32 callback id, the characters
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <cupti_activity.h>
#include <cupti_version.h>

#include "core/status.h"

namespace magneton::capture {

inline constexpr uint32_t kDumpFormatVersion = 1;

// Whether a dump can hold this record kind (kinds the processor reads).
bool DumpableKind(CUpti_ActivityKind kind);

class DumpWriter {
 public:
  // Stops adding records once the file reaches `max_bytes` (full() turns true).
  static Result<std::unique_ptr<DumpWriter>> Create(const std::string& path, uint64_t max_bytes);
  ~DumpWriter();
  DumpWriter(const DumpWriter&) = delete;
  DumpWriter& operator=(const DumpWriter&) = delete;

  Status Write(const CUpti_Activity* record, size_t size);
  Status WriteApiName(uint32_t domain, uint32_t cbid, const std::string& name);
  bool full() const { return full_; }
  int64_t records() const { return records_; }
  Status Close();

 private:
  DumpWriter(std::string path, FILE* f, uint64_t max_bytes) : path_(std::move(path)), f_(f), max_bytes_(max_bytes) {}
  Status Frame(uint32_t type, const void* a, size_t na, const void* b = nullptr, size_t nb = 0);
  uint64_t StringId(const char* s);

  std::string path_;
  FILE* f_ = nullptr;
  uint64_t max_bytes_ = 0, bytes_ = 0;
  bool full_ = false;
  int64_t records_ = 0;
  std::unordered_map<std::string, uint64_t> strings_;
  std::map<std::pair<uint32_t, uint32_t>, bool> api_names_;
};

// A dump read back into memory; records stay valid while it lives.
struct ActivityDump {
  uint32_t format_version = 0;
  uint32_t cupti_version = 0;
  struct Entry {
    size_t offset;  // in words
    size_t size;    // bytes
  };
  std::vector<Entry> entries;
  std::vector<uint64_t> words;     // records, 8-byte aligned like CUPTI's buffers
  std::deque<std::string> strings; // stable addresses for relocated names
  std::map<std::pair<uint32_t, uint32_t>, std::string> api_names;

  const CUpti_Activity* record(size_t i) const {
    return reinterpret_cast<const CUpti_Activity*>(words.data() + entries[i].offset);
  }
  size_t size(size_t i) const { return entries[i].size; }
  std::string ApiName(uint32_t domain, uint32_t cbid) const;
};

// Errors name the file: missing, not a dump, truncated, or from another CUPTI major version.
Result<ActivityDump> LoadDump(const std::string& path);

}  // namespace magneton::capture
