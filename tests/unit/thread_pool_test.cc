// ThreadPool: every task runs exactly once (handed out in turn or in per-thread ranges),
// thread indices are valid and stable, ranges run front to back and are taken over from the
// back, nested and concurrent use are safe, and idle workers stop using the CPU.
#include "base/thread_pool.h"

#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

namespace duet {
namespace {

void expect_each_task_once(ThreadPool& pool, bool ranges, int64_t n) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  std::atomic<int> bad_thread{0};
  pool.parallel_for_either(n, ranges, [&](int64_t task, int thread) {
    hits[task].fetch_add(1, std::memory_order_relaxed);
    if (thread < 0 || thread >= pool.size()) bad_thread.fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(hits[i].load(), 1) << "task " << i << " of " << n << (ranges ? " (ranges)" : "");
  EXPECT_EQ(bad_thread.load(), 0);
}

TEST(ThreadPool, EveryTaskRunsExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (bool ranges : {false, true})
      for (int64_t n : {0, 1, 2, 3, 7, 64, 1000, 100003}) expect_each_task_once(pool, ranges, n);
  }
}

// parallel_for_ranges: whatever a thread runs of its own range [n·t/N, n·(t+1)/N) is that
// range's start, in order, before anything it takes from another range (from the back).
TEST(ThreadPool, RangesRunOwnRangeFrontToBackFirst) {
  constexpr int kThreads = 3;
  constexpr int64_t kTasks = 60;
  ThreadPool pool(kThreads);
  for (int rep = 0; rep < 20; ++rep) {
    std::vector<std::vector<int64_t>> ran(kThreads);  // each only touched by its thread
    pool.parallel_for_ranges(kTasks, [&](int64_t task, int thread) {
      ran[static_cast<size_t>(thread)].push_back(task);
      // The middle range is slow, so the others finish first and take from it meanwhile.
      if (task >= kTasks / 3 && task < 2 * kTasks / 3)
        std::this_thread::sleep_for(std::chrono::microseconds(300));
    });
    int64_t total = 0;
    for (int t = 0; t < kThreads; ++t) {
      const int64_t lo = kTasks * t / kThreads, hi = kTasks * (t + 1) / kThreads;
      const std::vector<int64_t>& seq = ran[static_cast<size_t>(t)];
      size_t own = 0;
      while (own < seq.size() && seq[own] >= lo && seq[own] < hi) {
        EXPECT_EQ(seq[own], lo + static_cast<int64_t>(own)) << "thread " << t << ", rep " << rep;
        ++own;
      }
      for (size_t i = own; i < seq.size(); ++i)
        EXPECT_FALSE(seq[i] >= lo && seq[i] < hi) << "thread " << t << " came back to its range";
      total += static_cast<int64_t>(seq.size());
    }
    EXPECT_EQ(total, kTasks);
  }
}

// A thread stuck in a task does not hold up the rest of its range: the others take it from
// the back. Task 5 (the first of thread 1's range) waits until tasks 6..9 have run, which
// only works if someone else runs them; if the worker never joins, the caller runs all.
TEST(ThreadPool, RangesOfAStuckThreadAreTakenFromTheBack) {
  ThreadPool pool(2);
  for (int rep = 0; rep < 10; ++rep) {
    std::atomic<int> rest_done{0};
    std::atomic<bool> saw_rest{false};
    pool.parallel_for_ranges(10, [&](int64_t task, int) {
      if (task == 5) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (rest_done.load() < 4 && std::chrono::steady_clock::now() < deadline)
          std::this_thread::yield();
        saw_rest = rest_done.load() == 4;
      } else if (task > 5) {
        rest_done.fetch_add(1);
      }
    });
    EXPECT_TRUE(saw_rest.load()) << "rep " << rep;
  }
}

TEST(ThreadPool, DefaultSizeIsHardwareConcurrency) {
  ThreadPool pool;
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  EXPECT_EQ(pool.size(), hw > 0 ? hw : 1);
}

TEST(ThreadPool, OneThreadPoolRunsOnTheCaller) {
  ThreadPool pool(1);
  const auto me = std::this_thread::get_id();
  int count = 0;  // plain int: no other thread may touch it
  pool.parallel_for(50, [&](int64_t, int thread) {
    EXPECT_EQ(thread, 0);
    EXPECT_EQ(std::this_thread::get_id(), me);
    ++count;
  });
  EXPECT_EQ(count, 50);
}

// Index 0 is the caller; each index is used by one OS thread within a job, so per-thread
// scratch indexed by it is never shared.
TEST(ThreadPool, ThreadIndexNamesOneThread) {
  ThreadPool pool(4);
  const auto me = std::this_thread::get_id();
  for (int rep = 0; rep < 20; ++rep) {
    std::vector<std::atomic<std::thread::id>> owner(4);
    std::atomic<int> conflicts{0};
    pool.parallel_for(2000, [&](int64_t, int thread) {
      std::thread::id expected{};
      const auto self = std::this_thread::get_id();
      if (!owner[thread].compare_exchange_strong(expected, self) && expected != self)
        conflicts.fetch_add(1);
      if (thread == 0 && self != me) conflicts.fetch_add(1);
    });
    EXPECT_EQ(conflicts.load(), 0);
  }
}

// Workers do join: with slow tasks every thread of the pool ends up running some.
TEST(ThreadPool, WorkersShareSlowTasks) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> per_thread(3);
  pool.parallel_for(48, [&](int64_t, int thread) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    per_thread[thread].fetch_add(1);
  });
  for (int t = 0; t < 3; ++t) EXPECT_GT(per_thread[t].load(), 0) << "thread " << t;
}

TEST(ThreadPool, ManyRapidCalls) {
  ThreadPool pool(3);
  std::atomic<int64_t> sum{0};
  int64_t want = 0;
  for (int call = 0; call < 20000; ++call) {
    const int64_t n = call % 5;
    pool.parallel_for_either(n, call % 2 == 1, [&](int64_t task, int) { sum.fetch_add(task + 1); });
    want += n * (n + 1) / 2;
  }
  EXPECT_EQ(sum.load(), want);
}

TEST(ThreadPool, NestedCallRunsInlineOnTheSameThread) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(8 * 16);
  std::atomic<int> wrong_thread{0};
  pool.parallel_for(8, [&](int64_t outer, int thread) {
    const auto self = std::this_thread::get_id();
    pool.parallel_for_either(16, outer % 2 == 1, [&](int64_t inner, int inner_thread) {
      if (inner_thread != thread || std::this_thread::get_id() != self) wrong_thread.fetch_add(1);
      hits[outer * 16 + inner].fetch_add(1);
    });
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  EXPECT_EQ(wrong_thread.load(), 0);
}

TEST(ThreadPool, ConcurrentCallersAreSerialised) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  auto client = [&] {
    for (int i = 0; i < 500; ++i) {
      std::vector<std::atomic<int>> hits(37);
      pool.parallel_for_either(37, i % 2 == 1, [&](int64_t task, int) { hits[task].fetch_add(1); });
      for (auto& h : hits) total += h.load() == 1;
    }
  };
  std::thread a(client), b(client);
  a.join();
  b.join();
  EXPECT_EQ(total.load(), 2 * 500 * 37);
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// After a few milliseconds without work the workers sleep: a pool of 4 idling for 300 ms
// may spend only the spin/yield window (a few ms per worker) plus wake-up noise. The bound is
// what one worker that never sleeps would cost even on a machine whose two cores are shared
// with two busy processes (a third of a core for 0.3 s); a quiet pool uses a few ms.
TEST(ThreadPool, IdleWorkersSleep) {
  ThreadPool pool(4);
  pool.parallel_for(100, [](int64_t, int) {});
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let them reach the sleep
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double used = process_cpu_seconds() - before;
  EXPECT_LT(used, 0.1) << "idle pool used " << used << " s of CPU in 0.3 s";
  expect_each_task_once(pool, false, 1000);  // and it still works after sleeping
  expect_each_task_once(pool, true, 1000);
}

}  // namespace
}  // namespace duet
