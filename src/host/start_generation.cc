#include "host/start_generation.h"

#include <random>

namespace duet {

Result<PreparedRequest> prepare_generation(const ModelHost& host, ApiRequest& request) {
  decide_mode(request, host.think_default());
  if (request.load_only) return PreparedRequest{};
  return prepare_request(request, host.prompt_context());
}

Result<RunningGeneration> start_generation(ModelHost& host, const ApiRequest& request,
                                           const PreparedRequest& prepared) {
  OutputOptions out;
  out.skip_special_tokens = request.skip_special_tokens;
  out.reasoning = request.reasoning;
  out.thinking = prepared.thinking;
  out.prompt_opened_think = prepared.prompt_opened_think;
  out.reasoning_ids = host.reasoning_ids();
  out.parse_tool_calls = request.parse_tool_calls;
  out.stop = request.stop;
  out.tool_id_seed = std::random_device{}() * 0x9E3779B97F4A7C15ull + std::random_device{}();
  out.logprobs = request.sampling.logprobs;
  GenerateRequest gen = prepared.gen;
  if (const double limit = host.request_timeout_seconds(); limit > 0)
    gen.deadline = Clock::now() + std::chrono::microseconds(static_cast<int64_t>(limit * 1e6));
  if (request.output_format.grammar) {
    // Structured output: the answer follows the grammar; reasoning, when the prompt lets the
    // model think, stays free and the grammar starts after </think>.
    // The grammar's stack masks, once, in the background: until they are there its steps
    // walk the vocabulary for each new configuration.
    host.mask_precompute().add(request.output_format.grammar);
    auto constraint = std::make_shared<grammar::GrammarConstraint>(request.output_format.grammar,
                                                                   host.token_trie());
    // Jump-forward, unless the client asked for logprobs: forced tokens are not sampled, so
    // they have none. Forced text is encoded as a template's text, so that "<tool_call>" is
    // the token Qwen3 writes; a control token the encoder finds (a schema's "<|im_end|>") is
    // outside the grammar's vocabulary, and the jump stops before it.
    if (host.jump_forward() && !request.sampling.logprobs && request.sampling.top_logprobs == 0)
      constraint->set_text_encoder([&tokenizer = host.tokenizer()](std::string_view text) {
        return tokenizer.encode_template(text);
      });
    gen.constraint = std::move(constraint);
    gen.constraint_after_reasoning = prepared.thinking || prepared.prompt_opened_think;
  }
  auto handle = host.engine().submit(std::move(gen));
  if (!handle) return handle.status();
  RunningGeneration g;
  g.handle = std::move(handle.value());
  g.output = std::make_unique<OutputPipeline>(host.tokenizer(), std::move(out));
  return g;
}

}  // namespace duet
