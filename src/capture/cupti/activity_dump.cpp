#include "capture/cupti/activity_dump.h"

#include <cstddef>
#include <cstring>

#include <fmt/core.h>

namespace magneton::capture {
namespace {

constexpr char kMagic[8] = {'M', 'G', 'C', 'U', 'P', 'T', 'I', '1'};
enum FrameType : uint32_t { kRecord = 1, kString = 2, kApiName = 3 };

struct PointerField {
  size_t offset;
  bool is_string;  // a name to keep; other pointers are zeroed
};

// Every pointer field of the record kinds a dump holds.
std::vector<PointerField> PointerFields(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return {{offsetof(CUpti_ActivityKernel10, name), true},
              {offsetof(CUpti_ActivityKernel10, reserved0), false},
              {offsetof(CUpti_ActivityKernel10, pAccessPolicyWindow), false}};
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return {{offsetof(CUpti_ActivityMemcpy6, reserved0), false}};
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return {{offsetof(CUpti_ActivityMemcpyPtoP4, reserved0), false}};
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return {{offsetof(CUpti_ActivityMemset4, reserved0), false}};
    case CUPTI_ACTIVITY_KIND_MARKER:
      return {{offsetof(CUpti_ActivityMarker2, name), true}, {offsetof(CUpti_ActivityMarker2, domain), true}};
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return {{offsetof(CUpti_ActivityDevice5, name), true}};
    default:
      return {};
  }
}

size_t Padded(size_t n) { return (n + 7) & ~size_t{7}; }

}  // namespace

bool DumpableKind(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
    case CUPTI_ACTIVITY_KIND_MEMSET:
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
    case CUPTI_ACTIVITY_KIND_MARKER:
    case CUPTI_ACTIVITY_KIND_DEVICE:
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      return true;
    default:
      return false;
  }
}

Result<std::unique_ptr<DumpWriter>> DumpWriter::Create(const std::string& path, uint64_t max_bytes) {
  FILE* f = std::fopen(path.c_str(), "wbx");  // never overwrite: a dump is evidence
  if (!f) return MakeError(ErrorCode::kIo, fmt::format("{}: cannot create activity dump: {}", path, std::strerror(errno)));
  std::unique_ptr<DumpWriter> w(new DumpWriter(path, f, max_bytes));
  uint32_t header[2] = {kDumpFormatVersion, CUPTI_API_VERSION};
  if (std::fwrite(kMagic, 1, 8, f) != 8 || std::fwrite(header, 4, 2, f) != 2)
    return MakeError(ErrorCode::kIo, fmt::format("{}: cannot write activity dump header", path));
  w->bytes_ = 16;
  return w;
}

DumpWriter::~DumpWriter() { (void)Close(); }

Status DumpWriter::Frame(uint32_t type, const void* a, size_t na, const void* b, size_t nb) {
  static const char zeros[8] = {};
  uint32_t head[2] = {type, static_cast<uint32_t>(na + nb)};
  size_t pad = Padded(na + nb) - (na + nb);
  bool ok = std::fwrite(head, 4, 2, f_) == 2 && std::fwrite(a, 1, na, f_) == na &&
            (nb == 0 || std::fwrite(b, 1, nb, f_) == nb) && (pad == 0 || std::fwrite(zeros, 1, pad, f_) == pad);
  if (!ok) return MakeError(ErrorCode::kIo, fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
  bytes_ += 8 + na + nb + pad;
  return Status::Ok();
}

uint64_t DumpWriter::StringId(const char* s) {
  auto [it, added] = strings_.try_emplace(s, strings_.size());
  if (added) {
    uint64_t id = it->second;
    Status st = Frame(kString, &id, sizeof(id), s, std::strlen(s));
    if (!st.ok()) full_ = true;
  }
  return it->second;
}

Status DumpWriter::Write(const CUpti_Activity* record, size_t size) {
  if (!f_) return MakeError(ErrorCode::kInvalidArgument, fmt::format("{}: activity dump is closed", path_));
  if (full_ || !DumpableKind(record->kind)) return Status::Ok();
  if (bytes_ + size > max_bytes_) {
    full_ = true;
    return Status::Ok();
  }
  std::vector<unsigned char> copy(reinterpret_cast<const unsigned char*>(record),
                                  reinterpret_cast<const unsigned char*>(record) + size);
  for (const PointerField& p : PointerFields(record->kind)) {
    if (p.offset + sizeof(uint64_t) > size) continue;
    const char* s = nullptr;
    std::memcpy(&s, copy.data() + p.offset, sizeof(s));
    uint64_t v = (p.is_string && s) ? StringId(s) + 1 : 0;
    std::memcpy(copy.data() + p.offset, &v, sizeof(v));
  }
  ++records_;
  return Frame(kRecord, copy.data(), copy.size());
}

Status DumpWriter::WriteApiName(uint32_t domain, uint32_t cbid, const std::string& name) {
  if (!f_ || full_) return Status::Ok();
  if (!api_names_.try_emplace({domain, cbid}, true).second) return Status::Ok();
  uint32_t key[2] = {domain, cbid};
  return Frame(kApiName, key, sizeof(key), name.data(), name.size());
}

Status DumpWriter::Close() {
  if (!f_) return Status::Ok();
  int rc = std::fclose(f_);
  f_ = nullptr;
  if (rc != 0) return MakeError(ErrorCode::kIo, fmt::format("{}: close failed: {}", path_, std::strerror(errno)));
  return Status::Ok();
}

std::string ActivityDump::ApiName(uint32_t domain, uint32_t cbid) const {
  auto it = api_names.find({domain, cbid});
  return it == api_names.end() ? std::string() : it->second;
}

Result<ActivityDump> LoadDump(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) return MakeError(ErrorCode::kNotFound, fmt::format("{}: cannot open activity dump: {}", path, std::strerror(errno)));
  char magic[8];
  uint32_t header[2];
  if (std::fread(magic, 1, 8, f.get()) != 8 || std::memcmp(magic, kMagic, 8) != 0 ||
      std::fread(header, 4, 2, f.get()) != 2)
    return MakeError(ErrorCode::kCorrupt, fmt::format("{}: not a CUPTI activity dump", path));
  ActivityDump dump;
  dump.format_version = header[0];
  dump.cupti_version = header[1];
  if (dump.format_version != kDumpFormatVersion)
    return MakeError(ErrorCode::kUnsupported,
                     fmt::format("{}: activity dump format {} (this build reads {})", path, header[0], kDumpFormatVersion));
  // Record layouts change between CUPTI major versions (Kernel10 -> Kernel11 ...).
  if (dump.cupti_version / 10000 != CUPTI_API_VERSION / 10000)
    return MakeError(ErrorCode::kUnsupported, fmt::format("{}: recorded with CUPTI API {}, this build has {}", path,
                                                          dump.cupti_version, CUPTI_API_VERSION));
  std::vector<std::pair<uint64_t, std::string>> strings;
  std::vector<unsigned char> buf;
  for (;;) {
    uint32_t head[2];
    size_t got = std::fread(head, 4, 2, f.get());
    if (got == 0) break;
    if (got != 2) return MakeError(ErrorCode::kCorrupt, fmt::format("{}: truncated activity dump", path));
    buf.resize(Padded(head[1]));
    if (std::fread(buf.data(), 1, buf.size(), f.get()) != buf.size())
      return MakeError(ErrorCode::kCorrupt, fmt::format("{}: truncated activity dump", path));
    const size_t n = head[1];
    switch (head[0]) {
      case kRecord: {
        if (n < sizeof(CUpti_ActivityKind))
          return MakeError(ErrorCode::kCorrupt, fmt::format("{}: activity record of {} bytes", path, n));
        size_t offset = dump.words.size();
        dump.words.resize(offset + buf.size() / 8);
        std::memcpy(dump.words.data() + offset, buf.data(), buf.size());
        dump.entries.push_back({offset, n});
        break;
      }
      case kString:
        if (n < 8) return MakeError(ErrorCode::kCorrupt, fmt::format("{}: bad string entry", path));
        strings.emplace_back();
        std::memcpy(&strings.back().first, buf.data(), 8);
        strings.back().second.assign(reinterpret_cast<const char*>(buf.data()) + 8, n - 8);
        break;
      case kApiName: {
        if (n < 8) return MakeError(ErrorCode::kCorrupt, fmt::format("{}: bad API name entry", path));
        uint32_t key[2];
        std::memcpy(key, buf.data(), 8);
        dump.api_names[{key[0], key[1]}].assign(reinterpret_cast<const char*>(buf.data()) + 8, n - 8);
        break;
      }
      default:
        return MakeError(ErrorCode::kCorrupt, fmt::format("{}: unknown frame type {}", path, head[0]));
    }
  }
  // Relocate names: string id + 1 -> a pointer to the string this dump owns.
  std::vector<const char*> by_id;
  for (auto& [id, text] : strings) {
    if (id >= by_id.size()) by_id.resize(id + 1, nullptr);
    dump.strings.push_back(std::move(text));
    by_id[id] = dump.strings.back().c_str();
  }
  for (const auto& e : dump.entries) {
    auto* bytes = reinterpret_cast<unsigned char*>(dump.words.data() + e.offset);
    CUpti_ActivityKind kind;
    std::memcpy(&kind, bytes, sizeof(kind));
    for (const PointerField& p : PointerFields(kind)) {
      if (p.offset + sizeof(uint64_t) > e.size) continue;
      uint64_t v;
      std::memcpy(&v, bytes + p.offset, sizeof(v));
      const char* s = nullptr;
      if (v != 0) {
        if (!p.is_string || v - 1 >= by_id.size() || by_id[v - 1] == nullptr)
          return MakeError(ErrorCode::kCorrupt, fmt::format("{}: record names missing string {}", path, v - 1));
        s = by_id[v - 1];
      }
      std::memcpy(bytes + p.offset, &s, sizeof(s));
    }
  }
  return dump;
}

}  // namespace magneton::capture
