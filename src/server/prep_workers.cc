#include "server/prep_workers.h"

#include <algorithm>

namespace duet {

PrepWorkers::PrepWorkers(int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { run(); });
}

PrepWorkers::~PrepWorkers() { stop(); }

void PrepWorkers::submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      queue_.push_back(std::move(task));
      cv_.notify_one();
      return;
    }
  }
  task();
}

void PrepWorkers::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

void PrepWorkers::run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued ran
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace duet
