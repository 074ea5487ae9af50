#include "engine/request.h"

namespace duet {

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::kNone:
      return "none";
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
    case FinishReason::kError:
      return "error";
  }
  return "?";
}

bool RequestHandle::pop(TokenEvent& out, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return false;
  out = std::move(events_.front());
  events_.pop_front();
  return true;
}

bool RequestHandle::try_pop(TokenEvent& out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (events_.empty()) return false;
  out = std::move(events_.front());
  events_.pop_front();
  return true;
}

void RequestHandle::cancel() {
  if (cancelled_.exchange(true, std::memory_order_acq_rel)) return;
  std::function<void()> wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    wake = wake_engine_;
  }
  if (wake) wake();
}

bool RequestHandle::finished() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

RequestStats RequestHandle::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void RequestHandle::set_on_event(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  on_event_ = std::move(fn);
}

void RequestHandle::push(TokenEvent ev) {
  std::function<void()> notify;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ev.finish != FinishReason::kNone) done_ = true;
    events_.push_back(std::move(ev));
    notify = on_event_;  // copied under the lock: the consumer may set it concurrently
  }
  cv_.notify_all();
  if (notify) notify();
}

}  // namespace duet
