// The engine end to end on real (small) models: batching must not change results, the
// prefix cache must not change results, cancellation frees everything, the thinking
// budget injects Qwen's closing phrase.
#include "engine/engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <span>

#include "backend/ref_backend.h"
#include "backend/vulkan/vulkan_backend.h"
#include "base/thread_pool.h"
#include "forge/forge.h"
#include "support/grammar_match.h"
#include "support/test_util.h"
#include "text/grammar/gbnf.h"
#include "text/grammar/grammar_constraint.h"

namespace duet {
namespace {

// On the reference backend, or on the Vulkan one ("vulkan": lavapipe in CI), which must
// behave the same under the engine.
std::unique_ptr<Qwen3Model> load(const std::string& path, const std::string& backend = "ref") {
  std::unique_ptr<Backend> be;
  if (backend == "vulkan") {
    auto vk = make_vulkan_backend();
    EXPECT_TRUE(vk.is_ok()) << "no Vulkan device to test the GPU backend on: " << vk.message();
    if (!vk) return nullptr;
    be = std::move(vk.value());
  } else {
    be = make_ref_backend();
  }
  auto m = Qwen3Model::load(path, std::move(be));
  EXPECT_TRUE(m.is_ok()) << m.message();
  return std::move(m.value());
}

// Forged once per test process, on first use (ctest runs tests as parallel processes,
// so the file name carries the process id).
std::string forged_model_path() {
  static const std::string path = [] {
    const std::string p =
        ::testing::TempDir() + "/engine_forged_" + std::to_string(getpid()) + ".gguf";
    ForgeOptions o;
    o.shape.n_layer = 2;
    o.shape.n_embd = 64;
    o.shape.n_head = 4;
    o.shape.n_head_kv = 2;
    o.shape.head_dim = 16;
    o.shape.n_ff = 96;
    o.type = GgmlType::Q8_0;
    EXPECT_TRUE(forge_model(o, make_byte_vocab(), p).is_ok());
    return p;
  }();
  return path;
}

EngineConfig small_config(int64_t blocks = 512, int64_t budget = 64) {
  EngineConfig c;
  c.kv_blocks = blocks;
  c.block_size = 16;
  c.kv_type = GgmlType::F32;
  c.scheduler.max_batch_tokens = budget;
  c.scheduler.max_running = 32;
  return c;
}

GenerateRequest greedy(std::vector<int32_t> prompt, int64_t max_tokens) {
  GenerateRequest r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  return r;
}

std::vector<int32_t> prompt_of(int n, int salt, int32_t vocab) {
  std::vector<int32_t> p(n);
  for (int i = 0; i < n; ++i) p[i] = static_cast<int32_t>((i * 31 + salt * 17 + 5) % (vocab - 10));
  return p;
}

// Drains a finished request's events into its generated tokens.
std::vector<int32_t> tokens_of(RequestHandle& h, FinishReason* reason = nullptr) {
  std::vector<int32_t> out;
  TokenEvent ev;
  while (h.try_pop(ev)) {
    out.insert(out.end(), ev.tokens.begin(), ev.tokens.end());
    if (ev.finish != FinishReason::kNone && reason) *reason = ev.finish;
  }
  return out;
}

void run_until_idle(Engine& e) {
  for (int i = 0; i < 100000 && e.step(); ++i) {
  }
}

std::vector<int32_t> run_alone(Qwen3Model& m, const GenerateRequest& r) {
  auto e = Engine::create(m, small_config());
  EXPECT_TRUE(e.is_ok());
  auto h = (*e)->submit(r);
  EXPECT_TRUE(h.is_ok()) << h.message();
  run_until_idle(**e);
  return tokens_of(**h);
}

struct BatchingCase {
  std::string model;  // a file, or "forged"
  std::string backend;
};

class EngineBatching : public ::testing::TestWithParam<BatchingCase> {};

// 16 requests of different prompt lengths, arriving at different steps, in one engine with
// a small token budget (so prompts are chunked and ride along with others' decoding):
// every request's greedy tokens equal what it produces alone.
TEST_P(EngineBatching, ConcurrentGreedyEqualsAlone) {
  const BatchingCase& c = GetParam();
  auto model = load(c.model == "forged" ? forged_model_path() : c.model, c.backend);
  ASSERT_NE(model, nullptr);
  const int32_t vocab = static_cast<int32_t>(model->config().n_vocab);
  std::vector<GenerateRequest> reqs;
  for (int i = 0; i < 16; ++i) reqs.push_back(greedy(prompt_of(3 + i * 11, i, vocab), 12 + i % 5));
  std::vector<std::vector<int32_t>> alone;
  for (const auto& r : reqs) alone.push_back(run_alone(*model, r));

  auto e = Engine::create(*model, small_config(512, 48));
  ASSERT_TRUE(e.is_ok());
  std::vector<std::shared_ptr<RequestHandle>> handles;
  for (int i = 0; i < 16; ++i) {
    auto h = (*e)->submit(reqs[i]);
    ASSERT_TRUE(h.is_ok());
    handles.push_back(*h);
    for (int s = 0; s < i % 3; ++s) (*e)->step();  // staggered arrivals
  }
  run_until_idle(**e);
  for (int i = 0; i < 16; ++i) {
    FinishReason why = FinishReason::kNone;
    EXPECT_EQ(tokens_of(*handles[i], &why), alone[i]) << "request " << i;
    EXPECT_EQ(why, FinishReason::kLength);
  }
  const EngineStats s = (*e)->stats();
  EXPECT_EQ(s.running, 0);
  EXPECT_EQ(s.kv.used_blocks, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Models, EngineBatching,
    ::testing::Values(BatchingCase{test::golden_dir() + "/models/micro-f16.gguf", "ref"},
                      BatchingCase{test::golden_dir() + "/models/kq-q4_k_m.gguf", "ref"},
                      BatchingCase{"forged", "ref"}, BatchingCase{"forged", "vulkan"}),
    [](const auto& info) {
      return "model" + std::to_string(info.index) + "_" + info.param.backend;
    });

// A second request sharing a 1,000-token prefix computes only its new tokens and produces
// the same output as with no cache at all.
class EnginePrefixCache : public ::testing::TestWithParam<std::string> {};

TEST_P(EnginePrefixCache, SharedPrefixComputedOnceSameOutput) {
  auto model = load(test::golden_dir() + "/models/micro-f16.gguf", GetParam());
  ASSERT_NE(model, nullptr);
  const int32_t vocab = static_cast<int32_t>(model->config().n_vocab);
  const auto prefix = prompt_of(1000, 1, vocab);
  auto second_prompt = prefix;
  for (int i = 0; i < 40; ++i) second_prompt.push_back(static_cast<int32_t>(50 + i));
  const auto expected = run_alone(*model, greedy(second_prompt, 10));

  auto e = Engine::create(*model, small_config(512, 2048));
  ASSERT_TRUE(e.is_ok());
  auto first = (*e)->submit(greedy(prefix, 4));
  run_until_idle(**e);
  const EngineStats before = (*e)->stats();
  auto second = (*e)->submit(greedy(second_prompt, 10));
  run_until_idle(**e);
  const EngineStats after = (*e)->stats();
  EXPECT_EQ(tokens_of(**second), expected);
  const RequestStats rs = (*second)->stats();
  EXPECT_EQ(rs.cached_prompt_tokens, 992);  // 62 full blocks of 16
  EXPECT_EQ(after.prompt_tokens - before.prompt_tokens, 1040 - 992);
  EXPECT_EQ(after.kv.prefix_hits - before.kv.prefix_hits, 62);
  EXPECT_EQ(after.kv.used_blocks, 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, EnginePrefixCache, ::testing::Values("ref", "vulkan"),
                         [](const auto& info) { return info.param; });

TEST(EngineCancel, EveryPhaseReturnsThePoolToIdle) {
  auto model = load(forged_model_path());
  const int32_t vocab = static_cast<int32_t>(model->config().n_vocab);
  auto e = Engine::create(*model, small_config(64, 32));
  ASSERT_TRUE(e.is_ok());
  auto decoding = *(*e)->submit(greedy(prompt_of(10, 1, vocab), 1000));
  (*e)->step();
  (*e)->step();  // decoding now
  auto prefilling = *(*e)->submit(greedy(prompt_of(200, 2, vocab), 1000));
  (*e)->step();  // part of its prompt computed (budget 32)
  auto queued = *(*e)->submit(greedy(prompt_of(20, 3, vocab), 1000));
  EXPECT_GT((*e)->stats().kv.used_blocks, 0);
  queued->cancel();
  prefilling->cancel();
  decoding->cancel();
  (*e)->step();
  for (auto* h : {&queued, &prefilling, &decoding}) {
    FinishReason why = FinishReason::kNone;
    tokens_of(**h, &why);
    EXPECT_EQ(why, FinishReason::kCancelled);
  }
  const EngineStats s = (*e)->stats();
  EXPECT_EQ(s.kv.used_blocks, 0);
  EXPECT_EQ(s.running, 0);
  EXPECT_EQ(s.waiting, 0);
  EXPECT_EQ(s.requests_cancelled, 3);
  EXPECT_FALSE((*e)->step());
}

// The byte vocabulary's <think>, </think> and "\n" (forge/vocab_source.cc); `open` may stand
// in for <think>.
std::shared_ptr<const ReasoningTokenIds> byte_vocab_reasoning_ids(int32_t open = 263) {
  auto ids = std::make_shared<ReasoningTokenIds>();
  ids->think_open = open;
  ids->think_close = 264;
  ids->whitespace.assign(265, false);
  ids->whitespace['\n'] = true;
  return ids;
}

// Reasoning is counted the way the output pipeline reads it (engine/reasoning_tracker.h):
// a think block opens only before the first non-whitespace token. The greedy output's own
// tokens stand in for <think>.
TEST(EngineReasoningCount, ThinkOpensOnlyBeforeTheFirstWord) {
  auto model = load(forged_model_path());
  const GenerateRequest r = greedy({5, 6, 7, 8}, 12);
  const std::vector<int32_t> out = run_alone(*model, r);
  ASSERT_EQ(out.size(), 12u);
  ASSERT_NE(out[0], '\n');
  auto reasoning_with_open = [&](int32_t open_id) {
    EngineConfig c = small_config();
    c.reasoning_ids = byte_vocab_reasoning_ids(open_id);
    auto e = Engine::create(*model, c);
    EXPECT_TRUE(e.is_ok());
    auto h = *(*e)->submit(r);
    run_until_idle(**e);
    EXPECT_EQ(tokens_of(*h), out);
    return h->stats().reasoning_tokens;
  };
  EXPECT_EQ(reasoning_with_open(out[0]), 11);  // every token after the opening one
  // A token that first appears later opens nothing.
  size_t later = 1;
  while (later < out.size() && out[later] == out[0]) ++later;
  ASSERT_LT(later, out.size()) << "the greedy output repeats one token";
  EXPECT_EQ(reasoning_with_open(out[later]), 0);
}

// Shutdown ends every request with a final event, including one still in the inbox (never
// seen by the scheduler): a consumer waiting for its last event must not wait forever.
// Later submits are refused.
TEST(EngineShutdown, EndsRunningAndQueuedRequests) {
  auto model = load(forged_model_path());
  const int32_t vocab = static_cast<int32_t>(model->config().n_vocab);
  auto e = Engine::create(*model, small_config(64, 32));
  ASSERT_TRUE(e.is_ok());
  auto running = *(*e)->submit(greedy(prompt_of(10, 1, vocab), 1000));
  (*e)->step();
  auto inbox = *(*e)->submit(greedy(prompt_of(20, 3, vocab), 1000));  // no step after it
  (*e)->shutdown();
  for (auto* h : {&running, &inbox}) {
    FinishReason why = FinishReason::kNone;
    tokens_of(**h, &why);
    EXPECT_EQ(why, FinishReason::kCancelled);
    EXPECT_TRUE((*h)->finished());
  }
  EXPECT_EQ((*e)->stats().kv.used_blocks, 0);
  EXPECT_FALSE((*e)->submit(greedy(prompt_of(5, 4, vocab), 4)).is_ok());
  (*e)->shutdown();  // twice is fine (the destructor calls it again)
}

// A cache the backend cannot hold is an error from create, not a crash while the half-made
// engine is torn down.
TEST(EngineShutdown, ACacheThatCannotBeMadeIsAnError) {
  auto model = load(forged_model_path());
  EngineConfig c = small_config(64, 32);
  c.kv_type = GgmlType::Q4_K;  // not a KV cache type
  auto e = Engine::create(*model, c);
  ASSERT_FALSE(e.is_ok());
  EXPECT_NE(e.message().find("KV cache type"), std::string::npos) << e.message();
}

TEST(EngineThinkingBudget, InjectsClosingTokensAtTheCap) {
  auto model = load(forged_model_path());
  EngineConfig c = small_config();
  c.reasoning_ids = byte_vocab_reasoning_ids();
  auto e = Engine::create(*model, c);
  ASSERT_TRUE(e.is_ok());
  GenerateRequest r = greedy({1, 2, 3, 4}, 30);
  r.starts_in_reasoning = true;
  r.thinking_budget = 5;
  r.budget_closing_tokens = {70, 71, 72, 264};  // stands in for the phrase and </think>
  auto h = *(*e)->submit(r);
  run_until_idle(**e);
  std::vector<TokenEvent> evs;
  TokenEvent ev;
  while (h->try_pop(ev)) evs.push_back(ev);
  ASSERT_GE(evs.size(), 7u);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(evs[i].in_reasoning && !evs[i].injected);
  EXPECT_TRUE(evs[5].injected);
  EXPECT_EQ(evs[5].tokens, r.budget_closing_tokens);
  EXPECT_FALSE(evs[6].in_reasoning);
  EXPECT_EQ(h->stats().reasoning_tokens, 9);
  EXPECT_EQ(h->stats().generated_tokens, 30);
}

// Qwen3 may write "\n" before <think>. The output pipeline shows what follows as reasoning,
// so the engine must read the same block: the budget applies and the reasoning is counted.
TEST(EngineThinkingBudget, AppliesWhenTheReplyStartsWithWhitespace) {
  auto model = load(forged_model_path());
  static constexpr int32_t kOpen = 263, kClose = 264;
  EngineConfig c = small_config();
  c.reasoning_ids = byte_vocab_reasoning_ids();
  // The model writes "\n<think>" and then reasons ('r') until its block is closed, then
  // answers ('A').
  c.logits_override = [](std::span<const int32_t>, std::span<const int32_t> generated,
                         std::span<float> logits) {
    const bool closed = std::find(generated.begin(), generated.end(), kClose) != generated.end();
    const int32_t want = generated.empty()       ? '\n'
                         : generated.size() == 1 ? kOpen
                         : closed                ? 'A'
                                                 : 'r';
    std::fill(logits.begin(), logits.end(), -INFINITY);
    logits[static_cast<size_t>(want)] = 0;
  };
  auto e = Engine::create(*model, c);
  ASSERT_TRUE(e.is_ok());
  GenerateRequest r = greedy({1, 2, 3, 4}, 14);
  r.thinking_budget = 3;
  r.budget_closing_tokens = {'C', 'C', '\n', kClose, '\n', '\n'};  // the phrase's shape
  auto h = *(*e)->submit(r);
  run_until_idle(**e);
  std::vector<TokenEvent> evs;
  TokenEvent ev;
  std::vector<int32_t> tokens;
  while (h->try_pop(ev)) {
    tokens.insert(tokens.end(), ev.tokens.begin(), ev.tokens.end());
    evs.push_back(ev);
  }
  const std::vector<int32_t> want = {'\n', kOpen,  'r',  'r',  'r', 'C', 'C',
                                     '\n', kClose, '\n', '\n', 'A', 'A', 'A'};
  EXPECT_EQ(tokens, want);
  ASSERT_GE(evs.size(), 6u);
  EXPECT_FALSE(evs[0].in_reasoning);  // "\n"
  EXPECT_FALSE(evs[1].in_reasoning);  // <think>
  for (int i = 2; i < 5; ++i) EXPECT_TRUE(evs[i].in_reasoning) << i;
  EXPECT_TRUE(evs[5].injected);
  EXPECT_FALSE(evs[6].in_reasoning);
  // The three sampled tokens and the closing phrase through </think>; not the "\n\n" after.
  EXPECT_EQ(h->stats().reasoning_tokens, 3 + 4);
  EXPECT_EQ(h->stats().generated_tokens, 14);
}

TEST(EngineSeeds, SameSeedSameTokensWhateverTheBatch) {
  auto model = load(forged_model_path());
  const int32_t vocab = static_cast<int32_t>(model->config().n_vocab);
  GenerateRequest r;
  r.prompt = prompt_of(9, 4, vocab);
  r.sampling.temperature = 0.9f;
  r.sampling.top_p = 0.95f;
  r.sampling.seed = 1234;
  r.max_tokens = 20;
  const auto alone = run_alone(*model, r);
  // Drawn on the engine thread, and in parallel on a pool with the batch's other rows.
  ThreadPool pool(3);
  for (ThreadPool* sampling_pool : {static_cast<ThreadPool*>(nullptr), &pool}) {
    EngineConfig config = small_config();
    config.sampling_pool = sampling_pool;
    auto e = Engine::create(*model, config);
    ASSERT_TRUE(e.is_ok());
    std::vector<std::shared_ptr<RequestHandle>> others;
    for (int i = 0; i < 5; ++i) {
      GenerateRequest o = greedy(prompt_of(5 + i, i, vocab), 25);
      o.sampling.temperature = 0.7f;  // other sampled rows beside it
      o.sampling.seed = 77 + i;
      others.push_back(*(*e)->submit(o));
    }
    auto h = *(*e)->submit(r);
    run_until_idle(**e);
    EXPECT_EQ(tokens_of(*h), alone)
        << (sampling_pool ? "parallel draws" : "draws on the engine thread");
  }
}

TEST(EngineLimits, RejectsWhatCannotRun) {
  auto model = load(forged_model_path());
  auto e = Engine::create(*model, small_config(8, 64));  // 128 positions of cache
  ASSERT_TRUE(e.is_ok());
  auto too_long = (*e)->submit(greedy(std::vector<int32_t>(200, 5), 4));
  ASSERT_FALSE(too_long.is_ok());
  EXPECT_NE(too_long.message().find("200 tokens"), std::string::npos) << too_long.message();
  EXPECT_FALSE((*e)->submit(greedy({}, 4)).is_ok());
  EXPECT_FALSE((*e)->submit(greedy({1, 99999}, 4)).is_ok());
  GenerateRequest bad = greedy({1, 2}, 4);
  bad.sampling.top_p = 2;
  EXPECT_FALSE((*e)->submit(bad).is_ok());
  // max_tokens past the cache is clamped: the request ends with "length", not a failure.
  auto h = *(*e)->submit(greedy(std::vector<int32_t>(100, 5), 1000));
  run_until_idle(**e);
  FinishReason why = FinishReason::kNone;
  const auto toks = tokens_of(*h, &why);
  EXPECT_EQ(why, FinishReason::kLength);
  EXPECT_EQ(toks.size(), 28u);
}

TEST(EngineThread, RunsOnItsOwnThread) {
  auto model = load(forged_model_path());
  const int32_t vocab = static_cast<int32_t>(model->config().n_vocab);
  auto e = Engine::create(*model, small_config());
  ASSERT_TRUE(e.is_ok());
  (*e)->start();
  auto h = *(*e)->submit(greedy(prompt_of(12, 9, vocab), 8));
  int n = 0;
  TokenEvent ev;
  while (h->pop(ev, std::chrono::milliseconds(5000))) {
    n += static_cast<int>(ev.tokens.size());
    if (ev.finish != FinishReason::kNone) break;
  }
  EXPECT_EQ(n, 8);
  (*e)->stop();
}

// Structured output through the engine, on the byte vocabulary (token b is byte b): the random
// model writes only what the grammar allows, at temperature 1 over many seeds, and the request
// stops the moment the grammar is complete (no end token needed).
std::shared_ptr<TokenConstraint> byte_constraint(const std::string& gbnf) {
  auto g = grammar::parse_gbnf(gbnf);
  EXPECT_TRUE(g.is_ok()) << g.message();
  static const auto trie = [] {
    std::vector<grammar::TokenTrie::Token> bytes;
    for (int b = 0; b < 256; ++b) bytes.push_back({b, std::string(1, static_cast<char>(b))});
    return std::make_shared<const grammar::TokenTrie>(300, bytes);
  }();
  return std::make_shared<grammar::GrammarConstraint>(
      std::make_shared<const grammar::CompiledGrammar>(std::move(g.value())), trie);
}

// The same, with jump-forward: forced text is encoded a token per byte.
std::shared_ptr<TokenConstraint> byte_constraint_jumping(const std::string& gbnf) {
  auto c = byte_constraint(gbnf);
  static_cast<grammar::GrammarConstraint&>(*c).set_text_encoder([](std::string_view text) {
    std::vector<int32_t> out;
    for (char ch : text) out.push_back(static_cast<uint8_t>(ch));
    return out;
  });
  return c;
}

std::string bytes_of(const std::vector<int32_t>& tokens) {
  std::string s;
  for (int32_t t : tokens) s += static_cast<char>(t);
  return s;
}

TEST(EngineConstraint, RandomModelWritesOnlyWhatTheGrammarAllows) {
  auto model = load(forged_model_path());
  EngineConfig c = small_config();
  c.end_token_ids = {258};
  auto e = Engine::create(*model, c);
  ASSERT_TRUE(e.is_ok());
  const std::string gbnf =
      R"(root ::= "{\"n\": " ("0" | [1-9] [0-9]{0,2}) ", \"w\": \"" [a-z]{1,8} "\"}")";
  std::vector<std::shared_ptr<RequestHandle>> handles;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    GenerateRequest r;
    r.prompt = {5, 6, 7, 8};
    r.sampling.temperature = 1;
    r.sampling.seed = seed;
    r.max_tokens = 64;
    r.constraint = byte_constraint(gbnf);
    handles.push_back(*(*e)->submit(r));
  }
  run_until_idle(**e);
  auto check = grammar::parse_gbnf(gbnf);
  ASSERT_TRUE(check.is_ok());
  std::set<std::string> distinct;
  for (auto& h : handles) {
    FinishReason why = FinishReason::kNone;
    const std::string text = bytes_of(tokens_of(*h, &why));
    EXPECT_EQ(why, FinishReason::kStop) << text;
    EXPECT_TRUE(test::grammar_matches(check.value(), text)) << text;
    distinct.insert(text);
  }
  EXPECT_GT(distinct.size(), 6u);  // the seeds differ, the grammar holds for each
}

TEST(EngineConstraint, ThinkingRunsFreeThenTheGrammarApplies) {
  auto model = load(forged_model_path());
  EngineConfig c = small_config();
  c.end_token_ids = {258};
  c.reasoning_ids = byte_vocab_reasoning_ids();
  auto e = Engine::create(*model, c);
  ASSERT_TRUE(e.is_ok());
  GenerateRequest r;
  r.prompt = {1, 2, 3};
  r.sampling.temperature = 1;
  r.sampling.seed = 4;
  r.max_tokens = 60;
  r.thinking_budget = 6;
  r.budget_closing_tokens = {'\n', 264, '\n'};
  r.constraint = byte_constraint(R"(root ::= "yes" | "no")");
  r.constraint_after_reasoning = true;
  auto h = *(*e)->submit(r);
  run_until_idle(**e);
  std::vector<TokenEvent> evs;
  TokenEvent ev;
  while (h->try_pop(ev)) evs.push_back(ev);
  ASSERT_GE(evs.size(), 9u);
  EXPECT_EQ(evs[0].tokens, std::vector<int32_t>{263});  // the block opens first
  std::vector<int32_t> answer;
  bool closed = false;
  for (const TokenEvent& x : evs) {
    if (closed && !x.injected) answer.insert(answer.end(), x.tokens.begin(), x.tokens.end());
    if (x.injected) closed = true;
  }
  const std::string text = bytes_of(answer);
  EXPECT_TRUE(text == "yes" || text == "no") << text;
  EXPECT_EQ(evs.back().finish, FinishReason::kStop);
}

TEST(EngineConstraint, GreedyOutputIsTheSameAloneOrInABatch) {
  auto model = load(forged_model_path());
  const int32_t vocab = static_cast<int32_t>(model->config().n_vocab);
  const std::string gbnf = R"(root ::= [a-z ]{5,40} ".")";
  GenerateRequest r = greedy({9, 8, 7}, 50);
  r.constraint = byte_constraint(gbnf);
  const std::vector<int32_t> alone = run_alone(*model, r);
  auto e = Engine::create(*model, small_config());
  ASSERT_TRUE(e.is_ok());
  std::vector<std::shared_ptr<RequestHandle>> others;
  for (int i = 0; i < 5; ++i)
    others.push_back(*(*e)->submit(greedy(prompt_of(7 + i, i, vocab), 30)));
  r.constraint = byte_constraint(gbnf);
  auto h = *(*e)->submit(r);
  run_until_idle(**e);
  EXPECT_EQ(tokens_of(*h), alone);
  EXPECT_EQ(bytes_of(alone).back(), '.');
}

// Jump-forward: the text the grammar forces after a sampled token arrives as one injected
// event (not sampled, computed in one chunk), the reply still matches the grammar, max_tokens
// still holds, and greedy output is the same alone or in a batch.
TEST(EngineConstraint, JumpForwardInjectsForcedTextAndKeepsGreedyOutput) {
  auto model = load(forged_model_path());
  const int32_t vocab = static_cast<int32_t>(model->config().n_vocab);
  const std::string gbnf =
      R"(root ::= "{\"name\": \"" [a-z]{1,6} "\", \"kind\": \"" ("cat" | "dog") "\"}")";
  auto check = grammar::parse_gbnf(gbnf);
  ASSERT_TRUE(check.is_ok());
  GenerateRequest r = greedy({9, 8, 7}, 60);
  r.constraint = byte_constraint_jumping(gbnf);
  auto e = Engine::create(*model, small_config());
  ASSERT_TRUE(e.is_ok());
  auto h = *(*e)->submit(r);
  run_until_idle(**e);
  std::vector<TokenEvent> evs;
  TokenEvent ev;
  while (h->try_pop(ev)) evs.push_back(ev);
  std::vector<int32_t> alone;
  size_t sampled = 0, injected_runs = 0;
  for (const TokenEvent& x : evs) {
    alone.insert(alone.end(), x.tokens.begin(), x.tokens.end());
    if (x.tokens.empty()) continue;
    if (x.injected) {
      ++injected_runs;
      EXPECT_FALSE(x.in_reasoning);
    } else {
      ++sampled;
      EXPECT_EQ(x.tokens.size(), 1u);
    }
  }
  const std::string text = bytes_of(alone);
  EXPECT_TRUE(test::grammar_matches(check.value(), text)) << text;
  EXPECT_EQ(evs.back().finish, FinishReason::kStop);
  // The reply starts with forced text: it comes before the first step, unsampled.
  ASSERT_FALSE(evs.empty());
  EXPECT_TRUE(evs[0].injected);
  EXPECT_EQ(bytes_of(evs[0].tokens), "{\"name\": ");
  // At the start ({"name": , 9 of its 10 forced bytes), after the name's closing quote
  // (, "kind": , 10 of 11) and after the animal's first letter (the rest and "}).
  EXPECT_GE(injected_runs, 3u) << text;
  EXPECT_LT(sampled, text.size() / 2) << text;
  EXPECT_EQ(h->stats().generated_tokens, static_cast<int64_t>(alone.size()));

  // In a batch with others (small token budget, prompts chunked beside it): the same tokens.
  auto batch = Engine::create(*model, small_config());
  ASSERT_TRUE(batch.is_ok());
  std::vector<std::shared_ptr<RequestHandle>> others;
  for (int i = 0; i < 5; ++i)
    others.push_back(*(*batch)->submit(greedy(prompt_of(20 + i * 7, i, vocab), 30)));
  r.constraint = byte_constraint_jumping(gbnf);
  auto hb = *(*batch)->submit(r);
  run_until_idle(**batch);
  EXPECT_EQ(tokens_of(*hb), alone);

  // max_tokens cuts a jump short: the reply ends as a length stop at exactly the limit.
  GenerateRequest short_reply = greedy({9, 8, 7}, 4);
  short_reply.constraint = byte_constraint_jumping(gbnf);
  FinishReason why = FinishReason::kNone;
  const std::vector<int32_t> cut = [&] {
    auto e2 = Engine::create(*model, small_config());
    auto h2 = *(*e2)->submit(short_reply);
    run_until_idle(**e2);
    return tokens_of(*h2, &why);
  }();
  EXPECT_EQ(cut.size(), 4u);
  EXPECT_EQ(why, FinishReason::kLength);
  EXPECT_EQ(bytes_of(cut), "{\"na");
}

}  // namespace
}  // namespace duet
