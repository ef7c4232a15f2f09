#include "energy/sampler_util.h"

#include "core/thread_name.h"
#include "energy/clock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace magneton::energy {

Status PollingSampler::Start(SampleSink* sink) {
  if (!threads_.empty()) return MakeError(ErrorCode::kInvalidArgument, name() + " sampler already started");
  sink_ = sink;
  stop_.Reset();
  for (auto& loop : Loops())
    threads_.emplace_back([loop = std::move(loop), what = name()] {
      NameThisThread(what);
      loop();
    });
  return Status::Ok();
}

void PollingSampler::Stop() {
  if (threads_.empty()) return;
  stop_.Request();
  for (auto& t : threads_) t.join();
  threads_.clear();
  Finish();
}

void PollingSampler::Every(int64_t period_ns, const std::function<bool()>& tick) {
  for (;;) {
    int64_t t0 = NowNs();
    if (!tick()) return;
    int64_t wait = t0 + period_ns - NowNs();
    if (stop_.WaitFor(wait < 0 ? 0 : wait)) return;
  }
}

Result<std::string> ReadSmallFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return MakeError(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                     path + ": " + std::strerror(err));
  }
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      return MakeError(ErrorCode::kIo, path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t')) text.pop_back();
  return text;
}

}  // namespace magneton::energy
