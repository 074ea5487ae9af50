#include "engine/reasoning_tracker.h"

namespace duet {

ReasoningTracker::ReasoningTracker(const ReasoningTokenIds* ids, bool starts_inside)
    : ids_(ids), inside_(starts_inside) {}

ThinkTag ReasoningTracker::push(int32_t token) {
  if (inside_) ++reasoning_;
  if (ids_ == nullptr) return ThinkTag::kNone;
  const bool opener = only_whitespace_so_far_;
  if (!ids_->is_whitespace(token)) only_whitespace_so_far_ = false;
  if (token == ids_->think_open && opener) {
    inside_ = true;
    return ThinkTag::kOpen;
  }
  if (token == ids_->think_close && inside_) {
    inside_ = false;
    closed_ = true;
    return ThinkTag::kClose;
  }
  return ThinkTag::kNone;
}

}  // namespace duet
