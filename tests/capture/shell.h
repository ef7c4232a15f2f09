// Runs a shell command line for tests, capturing stdout, stderr and the exit code.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "../core/test_files.h"

namespace magneton::testing {

struct ShellResult {
  int exit_code = -1;
  std::string out, err;
};

inline ShellResult Shell(const TempDir& dir, const std::string& command) {
  std::string out = dir / "stdout.txt", err = dir / "stderr.txt";
  int status = std::system((command + " > " + out + " 2> " + err).c_str());
  ShellResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadBytes(out);
  r.err = ReadBytes(err);
  return r;
}

}  // namespace magneton::testing
