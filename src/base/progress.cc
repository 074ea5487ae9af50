#include "base/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace duet {
namespace {

constexpr double kQuietSeconds = 1.0;  // a step shorter than this shows nothing
constexpr auto kRedraw = std::chrono::milliseconds(100);

}  // namespace

Progress::Progress(std::string what, int64_t total, std::string unit)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      total_(std::max<int64_t>(total, 1)),
      tty_(isatty(STDERR_FILENO) != 0) {}

double Progress::elapsed() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

std::string Progress::bar_line(const std::string& what, int64_t done, int64_t total,
                               const std::string& unit, double seconds) {
  total = std::max<int64_t>(total, 1);
  done = std::clamp<int64_t>(done, 0, total);
  constexpr int kWidth = 20;
  const int filled = static_cast<int>(kWidth * done / total);
  char tail[96];
  const double left = done > 0 ? seconds * static_cast<double>(total - done) / done : 0;
  if (done > 0 && done < total)
    std::snprintf(tail, sizeof tail, "  %.1f s, %.1f s left", seconds, left);
  else
    std::snprintf(tail, sizeof tail, "  %.1f s", seconds);
  return what + "  [" + std::string(filled, '#') + std::string(kWidth - filled, ' ') + "] " +
         std::to_string(done * 100 / total) + "%  " + std::to_string(done) + "/" +
         std::to_string(total) + " " + unit + tail;
}

void Progress::set(int64_t done) {
  if (finished_) return;
  done_ = std::clamp<int64_t>(done, 0, total_);
  const double seconds = elapsed();
  if (seconds < kQuietSeconds && done_ < total_) return;
  if (!drawn_ && done_ >= total_ && seconds < kQuietSeconds) return;
  if (tty_) {
    const auto now = Clock::now();
    if (drawn_ && now - last_draw_ < kRedraw && done_ < total_) return;
    last_draw_ = now;
    std::fprintf(stderr, "\r\033[K%s", bar_line(what_, done_, total_, unit_, seconds).c_str());
    std::fflush(stderr);
    drawn_ = true;
    return;
  }
  const int quarter = static_cast<int>(done_ * 4 / total_);
  if (quarter <= quarters_shown_) return;
  quarters_shown_ = quarter;
  std::fprintf(stderr, "%s: %d%% (%lld/%lld %s, %.1f s)\n", what_.c_str(), quarter * 25,
               static_cast<long long>(done_), static_cast<long long>(total_), unit_.c_str(),
               seconds);
  drawn_ = true;
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (drawn_ && tty_) std::fprintf(stderr, "\r\033[K");
}

}  // namespace duet
