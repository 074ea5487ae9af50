// duet's log: one line per event on stderr, each tagged with the request id it
// belongs to ("-" for the server itself), so one request can be followed with grep.
#pragma once

#include <mutex>
#include <string>
#include <string_view>

namespace duet {

class Logger {
 public:
  enum class Level { kDebug, kInfo, kWarn, kError };
  explicit Logger(Level min_level = Level::kInfo) : min_level_(min_level) {}

  void log(Level level, std::string_view request_id, std::string_view message);
  void info(std::string_view request_id, std::string_view message) {
    log(Level::kInfo, request_id, message);
  }
  void warn(std::string_view request_id, std::string_view message) {
    log(Level::kWarn, request_id, message);
  }
  void error(std::string_view request_id, std::string_view message) {
    log(Level::kError, request_id, message);
  }
  void debug(std::string_view request_id, std::string_view message) {
    log(Level::kDebug, request_id, message);
  }

 private:
  Level min_level_;
  std::mutex mu_;  // one line at a time
};

}  // namespace duet
