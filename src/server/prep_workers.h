// Threads for the CPU work of admitting a generation request: parsing its body, deciding its
// mode, rendering the chat template and tokenizing. That work is linear in the body, but an
// 8 MB body still costs tens of milliseconds; on an I/O thread it would hold up every other
// connection that thread serves, /health and /ready included. Tasks run in the order they
// were submitted; a task hands its result back to its connection with Exchange::post.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace duet {

class PrepWorkers {
 public:
  explicit PrepWorkers(int threads);
  ~PrepWorkers();  // stop()
  PrepWorkers(const PrepWorkers&) = delete;
  PrepWorkers& operator=(const PrepWorkers&) = delete;

  // Runs `task` on a worker. After stop(), runs it at once on the caller's thread (nothing is
  // dropped).
  void submit(std::function<void()> task);
  // Runs what is queued, then joins the workers. Idempotent.
  void stop();

 private:
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace duet
