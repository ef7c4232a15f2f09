// libFuzzer target over the run store reader: any bytes, written to a file,
// must make LoadRun return a run or an Error, never crash, hang or leak.
// Built with clang when MAGNETON_FUZZ=ON (tests/fuzz/CMakeLists.txt); run by
// scripts/test.sh for a bounded time, seeded with a valid run file.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/store.h"

namespace {

// One scratch file per fuzzing process, reused for every input.
const std::string& ScratchPath() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/magneton-fuzz-" + std::to_string(getpid()) + ".mgt";
  }();
  return path;
}

void RemoveScratch() {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) unlink((ScratchPath() + suffix).c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  RemoveScratch();  // a -wal left by an earlier input must not leak into this one
  FILE* f = std::fopen(ScratchPath().c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  auto run = magneton::LoadRun(ScratchPath());
  if (!run.ok() && run.error().message.rfind(ScratchPath(), 0) != 0) std::abort();  // errors name the file
  auto header = magneton::ReadHeader(ScratchPath());
  (void)header;
  RemoveScratch();
  return 0;
}
