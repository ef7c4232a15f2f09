#include "energy/meter_sampler.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <thread>

#include "energy/sampler_util.h"

namespace magneton::energy {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool ValidChannel(std::string_view c) {
  if (c.empty()) return false;
  for (char ch : c)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.')) return false;
  return true;
}

}  // namespace

MeterLine ParseMeterLine(std::string_view line, bool may_be_header, MeterReading* out, std::string* why) {
  line = Trim(line);
  if (line.empty() || line.front() == '#') return MeterLine::kSkip;
  std::string_view fields[4];
  size_t n = 0;
  for (size_t pos = 0;;) {
    size_t comma = line.find(',', pos);
    if (n == 4) {
      *why = "more than 3 fields";
      return MeterLine::kBad;
    }
    fields[n++] = Trim(line.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  if (n > 3) {
    *why = "more than 3 fields";
    return MeterLine::kBad;
  }
  int64_t t = 0;
  auto [tend, terr] = std::from_chars(fields[0].data(), fields[0].data() + fields[0].size(), t);
  if (terr != std::errc() || tend != fields[0].data() + fields[0].size()) {
    // A first line of names ("t_ns,watts,channel") is a header, not an error.
    if (may_be_header && !fields[0].empty() && std::isalpha(static_cast<unsigned char>(fields[0].front())))
      return MeterLine::kSkip;
    *why = "t_ns is not an integer: '" + std::string(fields[0]) + "'";
    return MeterLine::kBad;
  }
  if (n < 2) {
    *why = "missing watts";
    return MeterLine::kBad;
  }
  double w = 0;
  auto [wend, werr] = std::from_chars(fields[1].data(), fields[1].data() + fields[1].size(), w);
  if (werr != std::errc() || wend != fields[1].data() + fields[1].size() || !std::isfinite(w) || w < 0) {
    *why = "watts is not a finite non-negative number: '" + std::string(fields[1]) + "'";
    return MeterLine::kBad;
  }
  if (t < 0) {
    *why = "negative t_ns";
    return MeterLine::kBad;
  }
  std::string channel;
  if (n == 3) {
    if (!ValidChannel(fields[2])) {
      *why = "channel must be letters, digits, '_', '-' or '.': '" + std::string(fields[2]) + "'";
      return MeterLine::kBad;
    }
    channel = std::string(fields[2]);
  }
  out->t_ns = t;
  out->watts = w;
  out->channel = std::move(channel);
  return MeterLine::kReading;
}

namespace {

class MeterSampler : public PollingSampler {
 public:
  MeterSampler(std::string path, int fd) : path_(std::move(path)), fd_(fd) {
    Device d;
    d.kind = "meter";
    d.name = path_;
    devices_.push_back(d);
    series_.push_back(SeriesSpec{0, "power", "W", "meter"});
    channel_series_[""] = 0;
  }
  ~MeterSampler() override {
    Stop();
    close(fd_);
  }

  std::string name() const override { return "meter"; }
  std::vector<Device> devices() const override { return devices_; }
  std::vector<SeriesSpec> series() const override { return series_; }

  std::vector<std::function<void()>> Loops() override { return {[this] { Loop(); }}; }
  void Finish() override {
    if (bad_ > 0)
      sink_->OnStat(MakeStat(stats::kMeterBadLines, bad_,
                             path_ + ": lines that are not 't_ns,watts[,channel]' (first: line " +
                                 std::to_string(first_bad_line_) + ": " + first_bad_why_ + ")"));
    if (out_of_order_ > 0)
      sink_->OnStat(MakeStat(stats::kMeterOutOfOrder, out_of_order_,
                             path_ + ": readings older than the previous one of their channel, skipped"));
  }

 private:
  // Reads whatever is there; at end of data, waits a little and tries again
  // (a growing file or a pipe whose writer is slow). On stop, reads what is
  // left once more so nothing written before stop is lost.
  void Loop() {
    char buf[65536];
    bool stopping = false;
    for (;;) {
      ssize_t n = read(fd_, buf, sizeof buf);
      if (n > 0) {
        partial_.append(buf, static_cast<size_t>(n));
        ConsumeLines();
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (stopping) break;
      stopping = stop_.WaitFor(50'000'000);
    }
    if (!partial_.empty()) {  // a last line without its newline
      partial_.push_back('\n');
      ConsumeLines();
    }
  }

  void ConsumeLines() {
    size_t start = 0;
    for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
      ++line_number_;
      MeterReading r;
      std::string why;
      std::string_view line = std::string_view(partial_).substr(start, nl - start);
      MeterLine kind = ParseMeterLine(line, !seen_content_, &r, &why);
      std::string_view text = Trim(line);
      if (!text.empty() && text.front() != '#') seen_content_ = true;
      if (kind == MeterLine::kBad) {
        if (bad_++ == 0) {
          first_bad_line_ = line_number_;
          first_bad_why_ = why;
        }
        continue;
      }
      if (kind == MeterLine::kReading) Emit(r);
    }
    partial_.erase(0, start);
  }

  void Emit(const MeterReading& r) {
    auto it = channel_series_.find(r.channel);
    int index;
    if (it == channel_series_.end()) {
      index = static_cast<int>(series_.size());
      series_.push_back(SeriesSpec{0, "power." + r.channel, "W", "meter"});
      channel_series_[r.channel] = index;
      sink_->OnSeries(index, series_.back());
    } else {
      index = it->second;
    }
    auto last = last_t_.find(index);
    if (last != last_t_.end() && r.t_ns < last->second) {
      ++out_of_order_;
      return;
    }
    last_t_[index] = r.t_ns;
    if (filter_.Update(static_cast<size_t>(index), r.watts)) sink_->OnSample(index, r.t_ns, r.watts);
  }

  std::string path_;
  int fd_;
  std::vector<Device> devices_;
  std::vector<SeriesSpec> series_;  // grows on the poll thread; series() is for before Start
  std::map<std::string, int> channel_series_;
  std::map<int, int64_t> last_t_;
  ChangeFilter filter_;
  std::string partial_;
  bool seen_content_ = false;
  int64_t line_number_ = 0, bad_ = 0, out_of_order_ = 0, first_bad_line_ = 0;
  std::string first_bad_why_;
};

}  // namespace

Result<std::unique_ptr<Sampler>> OpenMeterSampler(const SamplerOptions& options) {
  // O_NONBLOCK: opening a pipe must not wait for its writer.
  int fd = open(options.meter.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return MakeError(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                     "meter " + options.meter + ": " + std::strerror(errno));
  return std::unique_ptr<Sampler>(std::make_unique<MeterSampler>(options.meter, fd));
}

}  // namespace magneton::energy
