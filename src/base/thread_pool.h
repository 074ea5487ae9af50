// A fixed pool of worker threads for the data-parallel loops of one forward pass.
//
// The pool is created once; every parallel_for reuses the same threads. Work is handed out
// through an atomic task counter (or per-thread ranges: parallel_for_ranges), and a new job
// is announced by bumping a generation counter that idle workers spin on, so that the
// dozens of matmuls of one decode step cost no thread creation and no sleep/wake round
// trip. A worker that has seen no job for a few milliseconds goes to sleep on a condition
// variable, so an idle server uses no CPU; only the first job after such a pause pays the
// wake-up.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace duet {

class ThreadPool {
 public:
  // `n_threads` counts the calling thread, which works too: a pool of N starts N − 1
  // workers. 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(int n_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that execute tasks, the caller included.
  int size() const { return n_threads_; }

  // Calls fn(task, thread) once for every task in [0, n_tasks) and returns when all have
  // finished. `thread` in [0, size()) names the executing thread (the caller is 0), so a
  // task may use per-thread scratch indexed by it. fn must not throw.
  //
  // Calls from different threads are serialised. A call made from inside a task of the
  // same pool (nested use) runs all its tasks inline on that thread, passing the outer
  // task's thread index — safe, but without parallelism.
  template <typename Fn>
  void parallel_for(int64_t n_tasks, Fn&& fn) {
    run_fn(n_tasks, fn, false);
  }

  // The same, but the tasks are cut into size() contiguous ranges, one per thread: a thread
  // runs its own range front to back, then takes tasks from the back of the others' ranges
  // until none are left. For tasks that stream memory in task order (decode matmuls): each
  // thread reads one long run, which was measured up to 25 % faster than tasks handed out
  // in turn, while a thread that starts late or is descheduled still has its tasks taken.
  template <typename Fn>
  void parallel_for_ranges(int64_t n_tasks, Fn&& fn) {
    run_fn(n_tasks, fn, true);
  }

  // parallel_for_ranges when in_ranges, parallel_for otherwise: for a caller that picks the
  // way per job.
  template <typename Fn>
  void parallel_for_either(int64_t n_tasks, bool in_ranges, Fn&& fn) {
    run_fn(n_tasks, fn, in_ranges);
  }

 private:
  using TaskFn = void (*)(void* ctx, int64_t task, int thread);

  // fn behind a plain function pointer and a context, for run().
  template <typename F>
  void run_fn(int64_t n_tasks, F& fn, bool ranges) {
    run(
        n_tasks, [](void* ctx, int64_t task, int thread) { (*static_cast<F*>(ctx))(task, thread); },
        const_cast<void*>(static_cast<const void*>(&fn)), ranges);
  }

  // A thread's range of a ranges job: (front << 32) | back, tasks front..back−1 unclaimed.
  struct alignas(64) Range {
    std::atomic<uint64_t> front_back{0};
  };

  void run(int64_t n_tasks, TaskFn fn, void* ctx, bool ranges);
  // Claims the first (or, from_back, the last) unclaimed task of ranges_[r]; −1 when it is
  // empty.
  int64_t claim(int r, bool from_back);
  void worker_main(int thread);
  // Claims and runs tasks of the current job until none are left.
  void drain(int thread);
  // Joins job `generation` if it is still open; false when it is over.
  bool try_join(uint64_t generation);
  // Returns the first generation different from `seen`: spin, then yield, then sleep.
  uint64_t wait_for_job(uint64_t seen);

  int n_threads_;
  std::vector<std::thread> workers_;

  std::mutex submit_mu_;  // one job at a time

  // The current job, written by the submitter before it bumps `generation` and only read by
  // the workers. One cache line: a worker that sees the new generation gets the job in the
  // same transfer, and the counters that the threads write (next_task_, job_state_) sit on
  // lines of their own, so writing them does not take this line away from the workers.
  struct alignas(64) {
    TaskFn fn = nullptr;
    void* ctx = nullptr;
    int64_t tasks = 0;
    bool ranges = false;     // parallel_for_ranges: tasks come from `range`
    Range* range = nullptr;  // ranges_, one per thread
    std::atomic<uint64_t> generation{0};
    std::atomic<bool> stop{false};
  } job_;
  static_assert(sizeof(job_) == 64, "the job descriptor is one cache line");
  alignas(64) std::atomic<int64_t> next_task_{0};
  std::unique_ptr<Range[]> ranges_;  // owns job_.range
  // (generation << 32) | open bit | number of workers inside the job. A worker joins only
  // an open job of the generation it woke for; the submitter waits for the joined workers
  // alone and then closes the job, so a worker that was descheduled never delays a step.
  alignas(64) std::atomic<uint64_t> job_state_{0};

  // Sleeping workers; the submitter takes the mutex only when sleepers_ > 0.
  alignas(64) std::mutex sleep_mu_;
  std::condition_variable sleep_cv_;
  std::atomic<int> sleepers_{0};
};

}  // namespace duet
