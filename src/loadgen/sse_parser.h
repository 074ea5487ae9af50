// An incremental parser for Server-Sent Events (the WHATWG "event stream" format): bytes go
// in as they arrive from the socket, in pieces cut anywhere (mid-line, between \r and \n),
// and each complete event comes out at once, so that its arrival time is the time of the
// read that completed it.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace duet::loadgen {

class SseParser {
 public:
  // `on_data` gets the data of each dispatched event (several data: lines joined with \n);
  // `on_comment` each ": ..." line (keep-alives), without the colon.
  using DataFn = std::function<void(const std::string& data)>;
  using CommentFn = std::function<void(std::string_view comment)>;
  explicit SseParser(DataFn on_data, CommentFn on_comment = nullptr,
                     size_t max_event_bytes = size_t{16} << 20);

  // Feeds bytes; returns false (and stays failed) when a line or an event grows past
  // max_event_bytes: a server that never ends a line must not exhaust memory.
  bool feed(std::string_view bytes);
  // At end of stream: an event whose blank line never came is not dispatched (the spec's
  // rule), but a caller may want to know that one was pending.
  bool has_partial_event() const { return !line_.empty() || has_data_; }
  bool failed() const { return failed_; }

 private:
  void end_line();

  DataFn on_data_;
  CommentFn on_comment_;
  size_t max_bytes_;
  std::string line_;  // the current line, without its terminator
  std::string data_;  // the data of the event being built
  bool has_data_ = false;
  bool last_was_cr_ = false;  // a \r ended the previous piece: a \n right after belongs to it
  bool failed_ = false;
};

}  // namespace duet::loadgen
