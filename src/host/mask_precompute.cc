#include "host/mask_precompute.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

namespace duet {

MaskPrecompute::MaskPrecompute(std::shared_ptr<const grammar::TokenTrie> trie)
    : trie_(std::move(trie)), thread_([this] { run(); }) {}

MaskPrecompute::~MaskPrecompute() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void MaskPrecompute::add(std::shared_ptr<const grammar::CompiledGrammar> g) {
  if (g == nullptr || g->precomputed(*trie_)) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (g == running_ || std::find(queue_.begin(), queue_.end(), g) != queue_.end()) return;
    queue_.push_front(std::move(g));
    if (queue_.size() > kMaxQueued) queue_.pop_back();  // the oldest waits no more
  }
  cv_.notify_all();
}

void MaskPrecompute::wait_idle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return (queue_.empty() && running_ == nullptr) || stop_; });
}

void MaskPrecompute::run() {
  // Linux schedules threads one by one: this lowers this thread alone (nice 19).
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return !queue_.empty() || stop_; });
    if (stop_) return;
    running_ = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    running_->precompute_masks(*trie_, &stop_);
    lock.lock();
    running_.reset();
    cv_.notify_all();  // wait_idle()
  }
}

}  // namespace duet
