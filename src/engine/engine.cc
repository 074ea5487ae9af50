#include "engine/engine.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>

namespace duet {

// A request in flight: the scheduler's Sequence plus what the engine tracks around it.
struct Engine::Live {
  std::shared_ptr<RequestHandle> handle;
  GenerateRequest req;
  Sequence seq;
  std::unique_ptr<Sampler> sampler;
  ReasoningTracker reasoning{nullptr, false};
  bool budget_spent = false;
  int64_t generated = 0;
  std::string error;  // why the request ends with kError
  bool scheduled_once = false;
};

double prompt_key_cost(const Qwen3Config& c) {
  const double d = static_cast<double>(c.n_embd), q = static_cast<double>(c.q_width()),
               kv = static_cast<double>(c.kv_width()), ff = static_cast<double>(c.n_ff);
  const double weights = static_cast<double>(c.n_layer) * (d * (q + 2 * kv) + q * d + 3 * d * ff);
  const double per_key = static_cast<double>(c.n_layer) * static_cast<double>(c.n_head) *
                         static_cast<double>(c.head_dim) * 2;
  // pp512 on the 0.6B Q4_K_M file ran its matrices at ~590 GFLOP/s, a 4,096-token
  // prompt's attention at ~290 (docs/PERF.md, "Long context").
  constexpr double kAttentionSlowdown = 2.0;
  return weights > 0 ? kAttentionSlowdown * per_key / weights : 0.0;
}

Engine::Engine(Qwen3Model& model, const EngineConfig& config) : model_(model), config_(config) {}

Result<std::unique_ptr<Engine>> Engine::create(Qwen3Model& model, const EngineConfig& config) {
  std::unique_ptr<Engine> e(new Engine(model, config));
  int64_t n_blocks = config.kv_blocks;
  if (n_blocks <= 0)  // the budget, as far as the backend's buffers go
    n_blocks =
        std::min(KvStorage::blocks_for_budget(model.config().kv_shape(), config.kv_budget_bytes,
                                              config.block_size, config.kv_type),
                 KvStorage::max_blocks(model.backend(), model.config().kv_shape(),
                                       config.block_size, config.kv_type));
  if (n_blocks < 1) return Status::error("the KV cache budget holds no block; raise it");
  auto kv = model.new_kv_storage(n_blocks, config.block_size, config.kv_type);
  if (!kv) return kv.status();
  e->kv_ = std::move(kv.value());
  e->blocks_ = std::make_unique<BlockManager>(n_blocks, config.block_size);
  e->scheduler_ = std::make_unique<Scheduler>(config.scheduler, *e->blocks_);
  e->stats_.kv = e->blocks_->stats();
  e->stats_.block_size = config.block_size;
  return e;
}

Engine::~Engine() { shutdown(); }

void Engine::shutdown() {
  stop();
  if (!scheduler_) return;  // create() failed before the engine was whole: nothing ran
  // Requests still in the inbox were never seen by the scheduler; they get a final event
  // too, or their consumers would wait for one forever (and keep their state alive).
  std::vector<std::unique_ptr<Live>> fresh;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    fresh.swap(inbox_);
  }
  for (auto& l : fresh) {
    scheduler_->add(&l->seq);
    live_.push_back(std::move(l));
  }
  for (auto& l : live_)
    if (l->seq.state != SequenceState::kFinished) finish(*l, FinishReason::kCancelled);
  live_.clear();
  std::lock_guard<std::mutex> lock(mu_);
  stats_.running = 0;
  stats_.waiting = 0;
  stats_.kv = blocks_->stats();
}

int64_t Engine::max_sequence_tokens() const {
  const int64_t model = model_.config().max_context();
  const int64_t asked = config_.max_context > 0 ? std::min(config_.max_context, model) : model;
  return std::min(asked, blocks_->n_blocks() * blocks_->block_size());
}

Result<std::shared_ptr<RequestHandle>> Engine::submit(GenerateRequest req) {
  const Qwen3Config& c = model_.config();
  if (req.prompt.empty()) return Status::error("the prompt is empty");
  for (int32_t t : req.prompt)
    if (t < 0 || t >= c.n_vocab)
      return Status::error("prompt token " + std::to_string(t) + " is outside the vocabulary");
  for (int32_t t : req.stop_token_ids)
    if (t < 0 || t >= c.n_vocab)
      return Status::error("stop token id " + std::to_string(t) + " is outside the vocabulary");
  const int64_t limit = max_sequence_tokens();
  const int64_t n_prompt = static_cast<int64_t>(req.prompt.size());
  if (n_prompt >= limit)
    return Status::error("the prompt has " + std::to_string(n_prompt) +
                         " tokens; this server holds at most " + std::to_string(limit - 1) +
                         " prompt tokens (context " + std::to_string(limit) + ")");
  if (req.max_tokens < 1) return Status::error("max_tokens must be at least 1");
  if (req.min_tokens < 0) return Status::error("min_tokens must not be negative");
  if (req.thinking_budget && *req.thinking_budget < 0)
    return Status::error("thinking budget must not be negative");
  DUET_TRY(validate(req.sampling, c.n_vocab));
  req.max_tokens = std::min(req.max_tokens, limit - n_prompt);

  auto live = std::make_unique<Live>();
  live->handle = std::make_shared<RequestHandle>();
  live->handle->wake_engine_ = [this] { wake(); };
  live->seq.tokens = req.prompt;
  live->seq.n_prompt = n_prompt;
  live->reasoning = ReasoningTracker(config_.reasoning_ids.get(), req.starts_in_reasoning);
  uint64_t seed =
      req.sampling.seed ? *req.sampling.seed : std::random_device{}() * 0x9E3779B97F4A7C15ull;
  live->sampler = std::make_unique<Sampler>(req.sampling, seed);
  live->req = std::move(req);
  std::shared_ptr<RequestHandle> handle = live->handle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return Status::error("the engine is shut down");
    handle->id_ = live->seq.id = next_id_++;
    handle->stats_.prompt_tokens = n_prompt;
    handle->stats_.submitted = Clock::now();
    inbox_.push_back(std::move(live));
    wake_flag_ = true;
  }
  cv_.notify_all();
  return handle;
}

void Engine::wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    wake_flag_ = true;
  }
  cv_.notify_all();
}

void Engine::start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      if (step()) {
        if (config_.step_pause.count() > 0) {
          std::unique_lock<std::mutex> lock(mu_);
          cv_.wait_for(lock, config_.step_pause, [&] { return stop_.load(); });
        }
        continue;
      }
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return wake_flag_ || stop_.load(); });
      wake_flag_ = false;
    }
  });
}

void Engine::stop() {
  {
    // Under the lock: otherwise the flag can be set and notified between the engine
    // thread's check of it and its wait, and the wakeup is lost (join hangs).
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Engine::finish(Live& l, FinishReason reason, const std::string& error) {
  scheduler_->remove(&l.seq);  // frees its blocks now
  TokenEvent ev;
  ev.finish = reason;
  ev.error = error;
  ev.emitted = Clock::now();
  {
    std::lock_guard<std::mutex> lock(l.handle->mu_);
    l.handle->stats_.finished = ev.emitted;
    l.handle->stats_.generated_tokens = l.generated;
    l.handle->stats_.reasoning_tokens = l.reasoning.reasoning_tokens();
  }
  l.handle->push(std::move(ev));
  std::lock_guard<std::mutex> lock(mu_);
  stats_.requests_finished++;
  if (reason == FinishReason::kCancelled) stats_.requests_cancelled++;
}

// Whether the request's output constraint governs its next token: it has one, and either it
// applies from the start or the think block has closed.
bool Engine::constraint_active(const Live& l) const {
  if (!l.req.constraint) return false;
  if (!l.req.constraint_after_reasoning || !config_.reasoning_ids) return true;
  return l.reasoning.closed() || config_.reasoning_ids->think_open < 0;
}

FinishReason Engine::advance_constraint(Live& l, int32_t token) {
  if (!l.req.constraint->accept(token)) {
    l.error = l.req.constraint->why_stuck();
    if (l.error.empty())
      l.error =
          "the output format allows no token here (the vocabulary cannot spell what it needs)";
    return FinishReason::kError;
  }
  return l.req.constraint->must_end() ? FinishReason::kStop : FinishReason::kNone;
}

// Bans what the output constraint does not allow next, in one row of logits. Runs on the
// sampling pool: the constraint belongs to this request alone.
void Engine::apply_constraint(Live& l, std::span<float> logits) const {
  if (!l.req.constraint) return;
  const int64_t n = static_cast<int64_t>(logits.size());
  auto ban_end = [&] {
    for (int32_t t : config_.end_token_ids) logits[t] = -INFINITY;
    for (int32_t t : l.req.stop_token_ids) logits[t] = -INFINITY;
  };
  if (!constraint_active(l)) {
    if (l.reasoning.inside() || l.generated > 0) {
      ban_end();  // reasoning is free, but the answer must still come
      return;
    }
    // Thinking was asked for and has not begun: the block opens first, as Qwen3 opens it.
    const int32_t open = config_.reasoning_ids->think_open;
    const float keep = logits[open];
    std::fill(logits.begin(), logits.end(), -INFINITY);
    logits[open] = std::isfinite(keep) ? keep : 0.0f;
    return;
  }
  TokenConstraint& c = *l.req.constraint;
  const bool can_end = c.can_end();
  // End tokens keep their logits when the output may end here.
  std::vector<std::pair<int32_t, float>> ends;
  if (can_end) {
    for (int32_t t : config_.end_token_ids) ends.emplace_back(t, logits[t]);
    for (int32_t t : l.req.stop_token_ids) ends.emplace_back(t, logits[t]);
  }
  const std::span<const uint64_t> mask = c.allowed();
  for (size_t w = 0; w < mask.size(); ++w) {
    uint64_t banned = ~mask[w];
    while (banned != 0) {
      const int64_t t = static_cast<int64_t>(w * 64) + std::countr_zero(banned);
      if (t >= n) break;
      logits[t] = -INFINITY;
      banned &= banned - 1;
    }
  }
  for (auto [t, v] : ends) logits[t] = v;
}

// Appends the sampled token, enforces the thinking budget and the stop conditions, and
// pushes the event. Returns how the request ended, or kNone.
FinishReason Engine::after_sample(Live& l, const SampleResult& r) {
  const int32_t tok = r.token;
  const bool constrained = constraint_active(l);
  TokenEvent ev;
  ev.tokens = {tok};
  ev.logprob = r.logprob;
  ev.top_logprobs = r.top_logprobs;
  ev.in_reasoning = l.reasoning.inside();
  l.seq.tokens.push_back(tok);
  l.generated++;
  l.reasoning.push(tok);

  const bool is_end = std::find(config_.end_token_ids.begin(), config_.end_token_ids.end(), tok) !=
                          config_.end_token_ids.end() ||
                      std::find(l.req.stop_token_ids.begin(), l.req.stop_token_ids.end(), tok) !=
                          l.req.stop_token_ids.end();
  FinishReason finish = FinishReason::kNone;
  if (constrained && !is_end) finish = advance_constraint(l, tok);
  if (finish == FinishReason::kNone) {
    if (is_end &&
        (!l.req.ignore_eos || std::find(l.req.stop_token_ids.begin(), l.req.stop_token_ids.end(),
                                        tok) != l.req.stop_token_ids.end()))
      finish = FinishReason::kStop;
    else if (l.generated >= l.req.max_tokens)
      finish = FinishReason::kLength;
  }

  push_event(l, std::move(ev), 1);
  // Tokens the engine writes itself, after the sampled one.
  if (finish == FinishReason::kNone && l.reasoning.inside() && !l.budget_spent &&
      l.req.thinking_budget && l.reasoning.reasoning_tokens() >= *l.req.thinking_budget &&
      !l.req.budget_closing_tokens.empty()) {
    // The budget: at the cap, write Qwen's closing phrase and </think> through the cache. Its
    // </think> closes the block, and the "\n\n" after it is no more reasoning than when the
    // model writes it.
    l.budget_spent = true;
    const auto& close = l.req.budget_closing_tokens;
    const int64_t n =
        std::min<int64_t>(l.req.max_tokens - l.generated, static_cast<int64_t>(close.size()));
    inject(l, std::vector<int32_t>(close.begin(), close.begin() + n), true);
    if (l.generated >= l.req.max_tokens) finish = FinishReason::kLength;
  } else if (finish == FinishReason::kNone && !is_end) {
    finish = jump_forward(l);
  }
  return finish;
}

void Engine::push_event(Live& l, TokenEvent ev, int64_t n_tokens) {
  ev.emitted = Clock::now();
  {
    std::lock_guard<std::mutex> lock(l.handle->mu_);
    // Tokens forced at admission reach the client before the prefill: the first token, for
    // the timings (time to first token, prompt and generation durations), is the first one
    // after the request was scheduled.
    if (l.handle->stats_.first_token == Clock::time_point{} && l.scheduled_once)
      l.handle->stats_.first_token = ev.emitted;
    l.handle->stats_.generated_tokens = l.generated;
    l.handle->stats_.reasoning_tokens = l.reasoning.reasoning_tokens();
  }
  l.handle->push(std::move(ev));
  std::lock_guard<std::mutex> lock(mu_);
  stats_.generated_tokens += n_tokens;
}

// Tokens the engine writes itself: they go into the sequence (the next step computes them as
// one chunk with the sequence's other uncomputed tokens) and through the tracker like sampled
// tokens, and reach the client as one event.
void Engine::inject(Live& l, std::vector<int32_t> tokens, bool in_reasoning) {
  l.seq.tokens.insert(l.seq.tokens.end(), tokens.begin(), tokens.end());
  l.generated += static_cast<int64_t>(tokens.size());
  for (int32_t t : tokens) l.reasoning.push(t);
  TokenEvent ev;
  const int64_t n = static_cast<int64_t>(tokens.size());
  ev.tokens = std::move(tokens);
  ev.injected = true;
  ev.in_reasoning = in_reasoning;
  push_event(l, std::move(ev), n);
}

// Jump-forward: text the output format forces next (a property name, a tool call's opening)
// is appended unsampled. Returns how the request ends with it, or kNone.
FinishReason Engine::jump_forward(Live& l) {
  if (!constraint_active(l)) return FinishReason::kNone;
  std::vector<int32_t> forced = l.req.constraint->jump_forward(l.req.max_tokens - l.generated);
  if (forced.empty()) return FinishReason::kNone;
  inject(l, std::move(forced), false);
  if (l.req.constraint->must_end()) return FinishReason::kStop;
  return l.generated >= l.req.max_tokens ? FinishReason::kLength : FinishReason::kNone;
}

bool Engine::step() {
  // 1. New requests.
  {
    std::vector<std::unique_ptr<Live>> fresh;
    {
      std::lock_guard<std::mutex> lock(mu_);
      fresh.swap(inbox_);
    }
    for (auto& l : fresh) {
      scheduler_->add(&l->seq);
      // An answer the output format starts with forced text (a tool call's opening) gets it
      // before its first step, so the prompt's prefill computes it too.
      const FinishReason f = jump_forward(*l);
      if (f != FinishReason::kNone) finish(*l, f, l->error);
      live_.push_back(std::move(l));
    }
  }
  // 2. Cancellations, wherever the request is: its blocks go back now.
  bool did_work = false;
  for (auto& l : live_) {
    if (l->seq.state != SequenceState::kFinished && l->handle->cancelled()) {
      finish(*l, FinishReason::kCancelled);
      did_work = true;
    }
  }
  auto drop_finished = [&] {
    live_.erase(
        std::remove_if(live_.begin(), live_.end(),
                       [](const auto& l) { return l->seq.state == SequenceState::kFinished; }),
        live_.end());
  };
  drop_finished();

  // 3. Schedule and run one batched forward pass.
  StepPlan plan = scheduler_->schedule();
  if (!plan.empty()) {
    did_work = true;
    std::vector<ForwardChunk> chunks;
    chunks.reserve(plan.chunks.size());
    const auto now = Clock::now();
    for (const ScheduledChunk& c : plan.chunks) {
      ForwardChunk fc;
      fc.tokens =
          std::span<const int32_t>(c.seq->tokens.data() + c.start, static_cast<size_t>(c.count));
      fc.start_pos = c.start;
      fc.block_table = c.seq->block_table;
      fc.logits = c.sample ? LogitsFor::kLast : LogitsFor::kNone;
      chunks.push_back(fc);
    }
    for (auto& l : live_) {
      if (l->seq.state == SequenceState::kRunning && !l->scheduled_once) {
        l->scheduled_once = true;
        std::lock_guard<std::mutex> lock(l->handle->mu_);
        l->handle->stats_.scheduled = now;
        l->handle->stats_.cached_prompt_tokens = l->seq.n_prefix_hit_tokens;
      }
    }
    std::vector<float>& logits = step_logits_;  // kept: 4.8 MB a step at eight sequences
    Status s = model_.forward_batch(chunks, *kv_, logits);
    if (!s.is_ok()) {
      // Internal failure: end the requests in this batch with an error, keep serving.
      for (const ScheduledChunk& c : plan.chunks)
        for (auto& l : live_)
          if (&l->seq == c.seq && l->seq.state != SequenceState::kFinished)
            finish(*l, FinishReason::kError, s.message());
    } else {
      scheduler_->commit(plan);
      sample_step(plan, logits);
    }
  }
  // Prompt tokens computed this step, counted before finished sequences are freed.
  int64_t prompt_computed = 0;
  for (const ScheduledChunk& c : plan.chunks)
    if (c.start < c.seq->n_prompt) prompt_computed += std::min(c.count, c.seq->n_prompt - c.start);
  drop_finished();

  // 4. Publish a snapshot for /metrics.
  std::lock_guard<std::mutex> lock(mu_);
  stats_.running = scheduler_->n_running();
  stats_.waiting = scheduler_->n_waiting() + static_cast<int64_t>(inbox_.size());
  stats_.kv = blocks_->stats();
  stats_.preemptions = scheduler_->n_preemptions();
  if (!plan.empty()) stats_.steps++;
  stats_.prompt_tokens += prompt_computed;
  return did_work;
}

// Draws the step's tokens and applies them. The draws are independent (each request has
// its own sampler and generator, so a seed gives the same tokens whatever else is in the
// batch) and run on the sampling pool; appending, stop checks and events stay on this thread,
// in the plan's order.
void Engine::sample_step(const StepPlan& plan, std::vector<float>& logits) {
  struct Pick {
    Live* live;
    std::span<float> logits;
    TokenHistory history;
    SampleResult result;
  };
  std::vector<Pick> picks;
  const int64_t n_vocab = model_.config().n_vocab;
  size_t row = 0;
  for (const ScheduledChunk& c : plan.chunks) {
    if (!c.sample) continue;
    Live* l = nullptr;
    for (auto& cand : live_)
      if (&cand->seq == c.seq) l = cand.get();
    std::span<float> lg(logits.data() + row * n_vocab, static_cast<size_t>(n_vocab));
    ++row;
    // Until min_tokens are out, the end tokens cannot be picked.
    if (l->generated < l->req.min_tokens) {
      for (int32_t t : config_.end_token_ids) lg[t] = -INFINITY;
      for (int32_t t : l->req.stop_token_ids) lg[t] = -INFINITY;
    }
    TokenHistory hist{
        std::span<const int32_t>(l->seq.tokens.data(), static_cast<size_t>(l->seq.n_prompt)),
        std::span<const int32_t>(l->seq.tokens.data() + l->seq.n_prompt,
                                 l->seq.tokens.size() - static_cast<size_t>(l->seq.n_prompt))};
    if (config_.logits_override) config_.logits_override(hist.prompt, hist.generated, lg);
    picks.push_back({l, lg, hist, {}});
  }
  auto draw = [&](int64_t i, int) {
    apply_constraint(*picks[i].live, picks[i].logits);
    picks[i].result = picks[i].live->sampler->sample(picks[i].logits, picks[i].history);
  };
  if (config_.sampling_pool != nullptr && picks.size() > 1)
    config_.sampling_pool->parallel_for(static_cast<int64_t>(picks.size()), draw);
  else
    for (size_t i = 0; i < picks.size(); ++i) draw(static_cast<int64_t>(i), 0);
  for (Pick& p : picks) {
    FinishReason f = after_sample(*p.live, p.result);
    if (f == FinishReason::kNone &&
        static_cast<int64_t>(p.live->seq.tokens.size()) >= max_sequence_tokens())
      f = FinishReason::kLength;
    if (f == FinishReason::kNone && p.live->req.deadline && Clock::now() >= *p.live->req.deadline)
      f = FinishReason::kLength;
    if (f != FinishReason::kNone) finish(*p.live, f, p.live->error);
  }
}

EngineStats Engine::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace duet
