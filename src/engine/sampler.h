// Sampler: turns one row of logits into the next token for one sequence.
//
// Pipeline (the order of Hugging Face's processors and warpers, which vLLM follows except
// that it applies min-p before top-k/top-p):
//   logit_bias → repetition penalty → presence/frequency penalties → greedy if temperature
//   < 1e-5 (argmax, ties to the lowest id) → temperature → top-k → top-p → min-p → draw one
//   token from what is left, renormalised.
//
// Which tokens the penalties see (as vLLM does): the repetition penalty applies to every
// token of the prompt and the generated text, once per distinct token; presence and
// frequency penalties (OpenAI semantics) count only the generated tokens.
//
// Log-probabilities are those of the raw model distribution, log_softmax(logits), before
// bias, penalties, temperature and filtering — vLLM's default (logprobs_mode=raw_logprobs).
// They say what the model thought, so a token forced by logit_bias may show a low logprob,
// and a filtered-out token still has a finite one in top_logprobs.
//
// Determinism: each Sampler owns its generator and takes exactly one draw per non-greedy
// sample() call (none when greedy), so a seed fixes the tokens whatever else is in the batch.
// Ties are broken by the lower token id everywhere (argmax, top-k, top-p, top_logprobs).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/sampling_params.h"

namespace duet {

// xoshiro256** (Blackman & Vigna), seeded through splitmix64: small, fast, and the same
// stream on every platform, which std::mt19937's distributions do not promise.
class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed);
  uint64_t next();
  // Uniform in [0, 1), from the top 53 bits of next().
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t s_[4];
};

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0;
};

struct TokenProb {
  int32_t token = 0;
  double prob = 0;
};

struct SampleResult {
  int32_t token = 0;
  // log P(token) under the raw model distribution; NaN unless params.logprobs or top_logprobs.
  float logprob = 0;
  // The params.top_logprobs most likely tokens of the raw distribution, most likely first.
  std::vector<TokenLogprob> top_logprobs;
};

// The tokens a sequence has seen so far. Ids outside [0, n_vocab) are ignored.
struct TokenHistory {
  std::span<const int32_t> prompt;
  std::span<const int32_t> generated;
};

namespace sampler_detail {
// A token that survived a filter, with its logit and later its weight exp((l - max) / T).
struct Candidate {
  float value;
  int32_t id;
};
}  // namespace sampler_detail

class Sampler {
 public:
  // `params` should have passed validate(); `seed` is params.seed or, when that is unset, a
  // random value the engine picks once per sequence.
  Sampler(SamplingParams params, uint64_t seed);

  const SamplingParams& params() const { return params_; }

  // One token from `logits` (one row, n_vocab entries). Non-finite logits are tolerated:
  // NaN counts as impossible; if every token is impossible, the lowest id is returned.
  SampleResult sample(std::span<const float> logits, const TokenHistory& history);

  // Test and debugging hooks; they allocate, leave the generator untouched, and run the same
  // code as sample().
  // The logits after logit_bias and the penalties (steps before temperature).
  std::vector<float> adjusted_logits(std::span<const float> logits, const TokenHistory& history);
  // The distribution sample() draws from: surviving tokens with renormalised probabilities,
  // most likely first (ties: lower id first).
  std::vector<TokenProb> distribution(std::span<const float> logits, const TokenHistory& history);

 private:
  using Candidate = sampler_detail::Candidate;
  // What a draw picks from: the candidates in `list`, or, when neither top-k nor top-p ran,
  // every token whose weight in `dense` reaches min_weight (no list is built for that case).
  struct Pool {
    std::span<const Candidate> list;
    std::span<const float> dense;
    float min_weight = 0;
    double total = 0;
  };

  bool is_greedy() const;
  bool has_adjustments() const;
  // The logits the filters read: the model's row itself, or (with bias or penalties) values_
  // holding the sanitised and adjusted copy.
  std::span<const float> adjusted(std::span<const float> logits, const TokenHistory& history);
  void apply_penalties(const TokenHistory& history);
  // Temperature, top-k, top-p and min-p over the adjusted logits.
  Pool filter(std::span<const float> adjusted);
  Pool filter_top_k(std::span<const float> adjusted, size_t k);
  Pool filter_dense(std::span<const float> adjusted);
  // Min-p over cands_ (which hold weights), and the pool of what is left.
  Pool finish_list();
  Pool impossible();  // every logit is -inf or NaN: the pool is token 0 alone
  int32_t draw(const Pool& pool);

  SamplingParams params_;
  Xoshiro256 rng_;
  // Scratch, reused by every call (sized on the first; the vocabulary does not change):
  std::vector<float> values_;     // n_vocab: adjusted logits, then weights
  std::vector<Candidate> cands_;  // survivors: k for top-k, up to n_vocab for top-p alone
  std::vector<uint32_t> counts_;  // n_vocab, only with penalties; all zero between calls
};

// log_softmax(logits) into out (same size), computed in double; NaN logits count as -inf.
void log_softmax(std::span<const float> logits, std::span<float> out);

// The token greedy decoding picks from one row of logits: the largest, ties to the lowest
// id, NaN never winning (0 when nothing beats −inf). The same pass Sampler uses.
int32_t greedy_pick(std::span<const float> logits);

}  // namespace duet
