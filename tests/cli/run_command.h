// Runs the real magneton binary (MAGNETON_BINARY) and captures what it did.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "../core/test_files.h"

namespace magneton::testing {

struct CommandResult {
  int exit_code = -1;  // -1: did not exit normally
  std::string out, err;
};

inline CommandResult RunMagneton(const std::vector<std::string>& args) {
  TempDir capture;
  const std::string out_path = capture / "stdout", err_path = capture / "stderr";
  pid_t pid = fork();
  if (pid == 0) {
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> argv;
    std::string binary = MAGNETON_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  CommandResult r;
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = ReadBytes(out_path);
  r.err = ReadBytes(err_path);
  return r;
}

}  // namespace magneton::testing
