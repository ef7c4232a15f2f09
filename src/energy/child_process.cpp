#include "energy/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "energy/clock.h"

namespace magneton::energy {

namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};
std::atomic<pid_t> g_child{-1};

void Forward(int sig, siginfo_t* info, void*) {
  // Sent by a process (kill, timeout, a job scheduler): pass it on. Sent by the
  // kernel (the terminal's Ctrl-C, a window resize): the child already has it.
  pid_t child = g_child.load();
  if (child > 0 && info && (info->si_code == SI_USER || info->si_code == SI_QUEUE)) kill(child, sig);
}

std::vector<char*> Argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// In the child, between fork and exec: defaults back, then exec; on failure
// tell the parent errno through the close-on-exec pipe.
[[noreturn]] void ExecChild(char* const* argv, int report_fd, int stdout_fd, int stderr_fd) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : kForwarded) signal(sig, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  if (stdout_fd >= 0) dup2(stdout_fd, STDOUT_FILENO);
  if (stderr_fd >= 0) dup2(stderr_fd, STDERR_FILENO);
  execvp(argv[0], argv);
  int err = errno;
  ssize_t ignored = write(report_fd, &err, sizeof err);
  (void)ignored;
  _exit(err == ENOENT ? 127 : 126);
}

// Forks and execs; returns the pid, or the exec errno (> 0) through *exec_errno.
pid_t Launch(const std::vector<std::string>& args, int stdout_fd, int stderr_fd, int* exec_errno) {
  *exec_errno = 0;
  std::vector<char*> argv = Argv(args);
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    *exec_errno = errno;
    return -1;
  }
  pid_t pid = fork();
  if (pid == 0) ExecChild(argv.data(), report[1], stdout_fd, stderr_fd);
  close(report[1]);
  if (pid < 0) {
    *exec_errno = errno;
    close(report[0]);
    return -1;
  }
  int err = 0;
  ssize_t n;
  do n = read(report[0], &err, sizeof err);
  while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == static_cast<ssize_t>(sizeof err)) {  // exec failed: reap the child
    waitpid(pid, nullptr, 0);
    *exec_errno = err;
    return -1;
  }
  return pid;
}

int ExitCodeOf(int status, int* signal_out) {
  if (WIFSIGNALED(status)) {
    *signal_out = WTERMSIG(status);
    return 128 + WTERMSIG(status);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

Result<ChildProcess> ChildProcess::Spawn(const std::vector<std::string>& argv, int* exit_code_on_error) {
  if (argv.empty()) return MakeError(ErrorCode::kInvalidArgument, "no command given");
  // Handlers go in before fork so no signal between fork and Wait is lost.
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = Forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : kForwarded) sigaction(sig, &sa, nullptr);
  ChildProcess child;
  child.start_ns_ = NowNs();
  int err = 0;
  child.pid_ = Launch(argv, -1, -1, &err);
  if (child.pid_ < 0) {
    for (int sig : kForwarded) signal(sig, SIG_DFL);
    *exit_code_on_error = err == ENOENT ? 127 : 126;
    return MakeError(ErrorCode::kNotFound, "cannot run '" + argv[0] + "': " + std::strerror(err));
  }
  g_child.store(child.pid_);
  return child;
}

ChildExit ChildProcess::Wait() {
  ChildExit out;
  int status = 0;
  rusage usage;
  std::memset(&usage, 0, sizeof usage);
  while (wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  out.end_ns = NowNs();
  g_child.store(-1);
  for (int sig : kForwarded) signal(sig, SIG_DFL);
  out.exit_code = ExitCodeOf(status, &out.signal);
  out.user_s = double(usage.ru_utime.tv_sec) + usage.ru_utime.tv_usec * 1e-6;
  out.system_s = double(usage.ru_stime.tv_sec) + usage.ru_stime.tv_usec * 1e-6;
  out.max_rss_kb = usage.ru_maxrss;
  return out;
}

Result<Captured> RunCaptured(const std::vector<std::string>& argv, double timeout_s) {
  if (argv.empty()) return MakeError(ErrorCode::kInvalidArgument, "no command given");
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return MakeError(ErrorCode::kIo, std::string("pipe: ") + std::strerror(errno));
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  int err = 0;
  pid_t pid = Launch(argv, out[1], devnull, &err);
  close(out[1]);
  if (devnull >= 0) close(devnull);
  if (pid < 0) {
    close(out[0]);
    return MakeError(ErrorCode::kNotFound, "cannot run '" + argv[0] + "': " + std::strerror(err));
  }
  Captured c;
  int64_t deadline = NowNs() + static_cast<int64_t>(timeout_s * 1e9);
  char buf[4096];
  for (;;) {
    int64_t left_ms = (deadline - NowNs()) / 1'000'000;
    if (left_ms <= 0) {
      c.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(left_ms));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    c.out.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int sig = 0;
  c.exit_code = ExitCodeOf(status, &sig);
  return c;
}

}  // namespace magneton::energy
