// MaskPrecompute: each structured-output grammar's stack masks (text/grammar/stack_masks.h),
// computed once on a thread of its own, so that no step of the engine waits for them. The
// first requests with a new grammar run meanwhile: a step whose masks are not there yet walks
// the vocabulary for its configuration, as it would without them.
//
// The thread runs at the lowest scheduling priority, so it takes only what the engine and the
// HTTP threads leave of the cores. The newest grammar goes first (its requests are the ones
// about to run), and only a few wait: a client sending a new schema with every request gets
// walks, not a queue of stale work.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "text/grammar/grammar_constraint.h"

namespace duet {

class MaskPrecompute {
 public:
  explicit MaskPrecompute(std::shared_ptr<const grammar::TokenTrie> trie);
  ~MaskPrecompute();  // stops the grammar in progress and joins the thread
  MaskPrecompute(const MaskPrecompute&) = delete;
  MaskPrecompute& operator=(const MaskPrecompute&) = delete;

  // Queues `g` unless its masks are done, in progress or queued already.
  void add(std::shared_ptr<const grammar::CompiledGrammar> g);
  // Waits until nothing is queued or in progress (tests and benchmarks).
  void wait_idle();

  static constexpr size_t kMaxQueued = 4;

 private:
  void run();

  std::shared_ptr<const grammar::TokenTrie> trie_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<const grammar::CompiledGrammar>> queue_;  // newest first
  std::shared_ptr<const grammar::CompiledGrammar> running_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace duet
