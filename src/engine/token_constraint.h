// TokenConstraint: what a request's output must look like, seen from the engine — which token
// ids may come next. The engine knows nothing of grammars or bytes; a layer above (text/grammar)
// implements this from a compiled grammar and the vocabulary.
//
// The engine asks for the mask before each draw of a constrained sequence (on the sampling
// pool, so masks of a batch are computed in parallel), bans every token outside it, allows the
// end tokens exactly when can_end(), then reports the drawn token with accept(). When the
// output is complete and nothing may follow (must_end()), the request stops there. After each
// accepted token the engine asks jump_forward() for text the output is forced to continue
// with, appends those tokens without sampling them, and computes them as one chunk.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace duet {

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;

  // One bit per token id, 1 = may come next. End tokens are never set (see can_end()).
  virtual std::span<const uint64_t> allowed() = 0;
  // The output may end here.
  virtual bool can_end() const = 0;
  // The output is complete and nothing but the end may follow.
  virtual bool must_end() const = 0;
  // Moves past `token`; false when the token was not allowed.
  virtual bool accept(int32_t token) = 0;
  // Moves past the tokens (at most max_tokens) that must come next whatever is sampled, and
  // returns them; empty when the next token is a choice.
  virtual std::vector<int32_t> jump_forward(int64_t max_tokens) {
    (void)max_tokens;
    return {};
  }
  // Why nothing may follow, when the constraint itself knows better than "the vocabulary
  // cannot spell it"; empty otherwise.
  virtual std::string why_stuck() const { return {}; }
};

}  // namespace duet
