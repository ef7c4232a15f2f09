// Runs the real magneton binary (MAGNETON_BINARY) for the end-to-end tests in
// tests/cli and captures what it did: exit code, stdout, stderr.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/test_files.h"  // tests/core

namespace magneton::testing {

struct CommandResult {
  int exit_code = -1;  // -1: did not exit normally
  std::string out, err;
};

namespace run_detail {

// Runs argv[0] with `env` ("NAME=value") added to this process's environment.
inline CommandResult Run(std::vector<std::string> argv, const std::vector<std::string>& env) {
  TempDir capture;
  const std::string out_path = capture / "stdout", err_path = capture / "stderr";
  pid_t pid = fork();
  if (pid == 0) {
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    for (std::string e : env) {
      size_t eq = e.find('=');
      if (eq != std::string::npos) setenv(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 1);
    }
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  CommandResult r;
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = ReadBytes(out_path);
  r.err = ReadBytes(err_path);
  return r;
}

}  // namespace run_detail

// `magneton ARGS...`, with `env` ("NAME=value") added to the environment.
inline CommandResult RunMagneton(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv{MAGNETON_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_detail::Run(std::move(argv), env);
}

// A shell command line that runs the binary (kMagneton below) in a pipeline
// or with shell quoting, captured the same way.
inline const std::string kMagneton = MAGNETON_BINARY;
inline CommandResult RunMagnetonShell(const std::string& command_line, const std::vector<std::string>& env = {}) {
  return run_detail::Run({"/bin/sh", "-c", command_line}, env);
}

}  // namespace magneton::testing
