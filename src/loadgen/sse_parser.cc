#include "loadgen/sse_parser.h"

namespace duet::loadgen {

SseParser::SseParser(DataFn on_data, CommentFn on_comment, size_t max_event_bytes)
    : on_data_(std::move(on_data)),
      on_comment_(std::move(on_comment)),
      max_bytes_(max_event_bytes) {}

bool SseParser::feed(std::string_view bytes) {
  if (failed_) return false;
  for (char c : bytes) {
    if (last_was_cr_) {
      last_was_cr_ = false;
      if (c == '\n') continue;  // the \n of a \r\n split across two reads
    }
    if (c == '\r' || c == '\n') {
      last_was_cr_ = c == '\r';
      end_line();
      continue;
    }
    line_ += c;
    if (line_.size() + data_.size() > max_bytes_) {
      failed_ = true;
      return false;
    }
  }
  return true;
}

void SseParser::end_line() {
  if (line_.empty()) {  // a blank line dispatches the event
    if (has_data_) {
      std::string data;
      data.swap(data_);
      has_data_ = false;
      on_data_(data);
    }
    return;
  }
  if (line_[0] == ':') {
    if (on_comment_) on_comment_(std::string_view(line_).substr(1));
    line_.clear();
    return;
  }
  // "field: value" (one optional space after the colon); a line without a colon is a field
  // with an empty value. Only data matters here; event, id and retry are ignored.
  const size_t colon = line_.find(':');
  const std::string_view field = std::string_view(line_).substr(0, colon);
  if (field == "data") {
    std::string_view value;
    if (colon != std::string::npos) {
      value = std::string_view(line_).substr(colon + 1);
      if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
    }
    if (has_data_) data_ += '\n';
    data_.append(value);
    has_data_ = true;
  }
  line_.clear();
}

}  // namespace duet::loadgen
