#include "base/log.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace duet {

void Logger::log(Level level, std::string_view request_id, std::string_view message) {
  if (level < min_level_) return;
  static constexpr const char* kNames[] = {"debug", "info", "warn", "error"};
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  std::lock_guard<std::mutex> lock(mu_);
  std::fprintf(stderr, "%s.%03dZ %-5s [%.*s] %.*s\n", stamp, ms, kNames[static_cast<int>(level)],
               static_cast<int>(request_id.empty() ? 1 : request_id.size()),
               request_id.empty() ? "-" : request_id.data(), static_cast<int>(message.size()),
               message.data());
  std::fflush(stderr);
}

}  // namespace duet
