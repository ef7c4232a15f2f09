// Helpers for the energy tests: temporary folders and waiting on samplers.
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace magneton::energy::testing {

namespace fs = std::filesystem;

inline std::string TestData(const std::string& rel) { return std::string(MAGNETON_TEST_DATA) + "/" + rel; }

// A fresh folder under TMPDIR, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "magneton-energy-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::trunc);
  f << text;
}

// Polls `done` every 2 ms for up to `timeout_ms`; true when it held.
template <class Done>
bool WaitUntil(Done done, int timeout_ms = 3000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return done();
}

}  // namespace magneton::energy::testing
