#include "base/thread_pool.h"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace duet {
namespace {

// How long an idle worker keeps polling before it sleeps. Spinning covers the gap between
// two ops of one step (microseconds); yielding covers the gap between steps; after
// kYieldFor the pool is idle and workers give the CPU back entirely.
constexpr int kSpinIterations = 2000;
constexpr auto kYieldFor = std::chrono::milliseconds(3);

// The pool whose task this thread is running (and the index it runs under), so that a
// nested parallel_for is recognised instead of deadlocking on submit_mu_.
thread_local const ThreadPool* t_pool = nullptr;
thread_local int t_thread = 0;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

class CurrentPool {
 public:
  CurrentPool(const ThreadPool* pool, int thread) : saved_pool_(t_pool), saved_thread_(t_thread) {
    t_pool = pool;
    t_thread = thread;
  }
  ~CurrentPool() {
    t_pool = saved_pool_;
    t_thread = saved_thread_;
  }

 private:
  const ThreadPool* saved_pool_;
  int saved_thread_;
};

}  // namespace

ThreadPool::ThreadPool(int n_threads) {
  if (n_threads <= 0) n_threads = static_cast<int>(std::thread::hardware_concurrency());
  n_threads_ = n_threads > 0 ? n_threads : 1;
  ranges_ = std::make_unique<Range[]>(static_cast<size_t>(n_threads_));
  job_.range = ranges_.get();
  workers_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
  job_.stop.store(true, std::memory_order_seq_cst);
  job_.generation.fetch_add(1, std::memory_order_seq_cst);
  {
    std::lock_guard<std::mutex> lock(sleep_mu_);
    sleep_cv_.notify_all();
  }
  for (auto& w : workers_) w.join();
}

constexpr uint64_t kJobOpen = 1ull << 31;
constexpr uint64_t kJoinedMask = kJobOpen - 1;

void ThreadPool::run(int64_t n_tasks, TaskFn fn, void* ctx, bool ranges) {
  if (n_tasks <= 0) return;
  if (t_pool == this) {  // nested: the workers are busy with the outer job
    for (int64_t i = 0; i < n_tasks; ++i) fn(ctx, i, t_thread);
    return;
  }
  std::lock_guard<std::mutex> submit(submit_mu_);
  CurrentPool current(this, 0);
  if (workers_.empty() || n_tasks == 1) {  // not worth waking anyone
    for (int64_t i = 0; i < n_tasks; ++i) fn(ctx, i, 0);
    return;
  }
  job_.fn = fn;
  job_.ctx = ctx;
  job_.tasks = n_tasks;
  next_task_.store(0, std::memory_order_relaxed);
  // A range's ends are packed in 32 bits each; a job that large takes the task counter.
  job_.ranges = ranges && n_tasks < (int64_t{1} << 31);
  if (job_.ranges) {
    for (int r = 0; r < n_threads_; ++r) {
      const uint64_t front = static_cast<uint64_t>(n_tasks * r / n_threads_);
      const uint64_t back = static_cast<uint64_t>(n_tasks * (r + 1) / n_threads_);
      job_.range[r].front_back.store((front << 32) | back, std::memory_order_relaxed);
    }
  }
  const uint64_t generation = job_.generation.load(std::memory_order_relaxed) + 1;
  job_state_.store((generation << 32) | kJobOpen, std::memory_order_relaxed);
  // seq_cst pairs with the sleeper's increment of sleepers_ followed by its re-check of
  // job_.generation: either it sees the new generation, or we see it asleep and wake it.
  job_.generation.store(generation, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(sleep_mu_);
    sleep_cv_.notify_all();
  }
  drain(0);
  // Every task is claimed; wait for the workers still running one (a short wait, never a
  // sleep), then close the job so that late workers stay out.
  for (int i = 0;; ++i) {
    uint64_t state = job_state_.load(std::memory_order_acquire);
    if ((state & kJoinedMask) == 0 &&
        job_state_.compare_exchange_weak(state, state & ~kJobOpen, std::memory_order_acq_rel))
      break;
    if (i < kSpinIterations)
      cpu_relax();
    else
      std::this_thread::yield();
  }
}

bool ThreadPool::try_join(uint64_t generation) {
  uint64_t state = job_state_.load(std::memory_order_acquire);
  for (;;) {
    if ((state >> 32) != (generation & 0xFFFFFFFFu) || (state & kJobOpen) == 0) return false;
    if (job_state_.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel)) return true;
  }
}

int64_t ThreadPool::claim(int r, bool from_back) {
  std::atomic<uint64_t>& fb = job_.range[r].front_back;
  uint64_t v = fb.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t front = v >> 32, back = v & 0xFFFFFFFFu;
    if (front >= back) return -1;
    const uint64_t rest = from_back ? (front << 32) | (back - 1) : ((front + 1) << 32) | back;
    if (fb.compare_exchange_weak(v, rest, std::memory_order_relaxed))
      return static_cast<int64_t>(from_back ? back - 1 : front);
  }
}

void ThreadPool::drain(int thread) {
  if (job_.ranges) {
    for (int64_t task; (task = claim(thread, false)) >= 0;) job_.fn(job_.ctx, task, thread);
    for (int i = 1; i < n_threads_; ++i) {
      const int r = (thread + i) % n_threads_;
      for (int64_t task; (task = claim(r, true)) >= 0;) job_.fn(job_.ctx, task, thread);
    }
    return;
  }
  for (;;) {
    const int64_t task = next_task_.fetch_add(1, std::memory_order_relaxed);
    if (task >= job_.tasks) return;
    job_.fn(job_.ctx, task, thread);
  }
}

uint64_t ThreadPool::wait_for_job(uint64_t seen) {
  for (int i = 0; i < kSpinIterations; ++i) {
    const uint64_t g = job_.generation.load(std::memory_order_acquire);
    if (g != seen) return g;
    cpu_relax();
  }
  const auto yield_until = std::chrono::steady_clock::now() + kYieldFor;
  while (std::chrono::steady_clock::now() < yield_until) {
    const uint64_t g = job_.generation.load(std::memory_order_acquire);
    if (g != seen) return g;
    std::this_thread::yield();
  }
  std::unique_lock<std::mutex> lock(sleep_mu_);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  sleep_cv_.wait(lock, [&] { return job_.generation.load(std::memory_order_seq_cst) != seen; });
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  return job_.generation.load(std::memory_order_acquire);
}

void ThreadPool::worker_main(int thread) {
  CurrentPool current(this, thread);
  uint64_t seen = 0;
  for (;;) {
    seen = wait_for_job(seen);
    if (job_.stop.load(std::memory_order_acquire)) return;
    if (!try_join(seen)) continue;  // woke too late: the submitter finished without us
    drain(thread);
    job_state_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace duet
