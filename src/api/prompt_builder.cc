#include "api/prompt_builder.h"

#include <algorithm>

namespace duet {
namespace {

Status check_ids(const std::vector<int64_t>& ids, int64_t n_vocab, const char* what) {
  for (int64_t id : ids)
    if (id < 0 || id >= n_vocab)
      return Status::error(std::string(what) + " contains token id " + std::to_string(id) +
                           ", outside the vocabulary [0, " + std::to_string(n_vocab) + ")");
  return Status::ok();
}

// True when the last assistant turn of the prompt has an unclosed <think>.
bool ends_inside_think(const std::vector<int32_t>& ids, const PromptContext& c) {
  if (c.think_open < 0) return false;
  for (size_t i = ids.size(); i-- > 0;) {
    if (ids[i] == c.think_close || ids[i] == c.im_start) return false;
    if (ids[i] == c.think_open) return true;
  }
  return false;
}

// An assistant prefill continues the rendered prompt. A leading <think> and the first
// </think> after it are structure the server understands (the prefill opens, and may close,
// the reasoning block), so they are trusted; every other byte of it is client text.
void append_prefill(MarkedText& prompt, std::string_view prefill) {
  constexpr std::string_view kOpen = "<think>", kClose = "</think>";
  if (!prefill.starts_with(kOpen)) {
    prompt.append_client(prefill);
    return;
  }
  prompt.append_trusted(kOpen);
  prefill.remove_prefix(kOpen.size());
  const size_t close = prefill.find(kClose);
  if (close == std::string_view::npos) {
    prompt.append_client(prefill);
    return;
  }
  prompt.append_client(prefill.substr(0, close));
  prompt.append_trusted(kClose);
  prompt.append_client(prefill.substr(close + kClose.size()));
}

Result<std::vector<int32_t>> render_chat(const ApiRequest& r, const PromptContext& c) {
  if (c.chat_template == nullptr) return Status::error("this model has no chat template");
  Json messages = r.messages;
  std::string prefill;
  if (r.continue_final_message) {
    if (messages.size() < 2)
      return Status::error("a final assistant message to continue needs a message before it");
    prefill = messages.back()["content"].get<std::string>();
    messages.erase(messages.size() - 1);
  }
  ChatTemplateOptions options;
  options.add_generation_prompt = true;
  options.enable_thinking = r.mode.enabled;
  options.extra_kwargs = r.template_kwargs;
  options.extra_kwargs.erase("enable_thinking");  // the resolved mode decides it
  auto rendered = c.chat_template->render_marked(messages, r.tools, options);
  if (!rendered) return rendered.status().with_context("rendering the chat template");
  MarkedText& prompt = rendered.value();
  append_prefill(prompt, prefill);
  return c.tokenizer->encode_marked(prompt.text, prompt.trusted, c.client_added_tokens);
}

}  // namespace

Result<PreparedRequest> prepare_request(const ApiRequest& r, const PromptContext& c) {
  PreparedRequest p;
  GenerateRequest& g = p.gen;
  // 1. The prompt's ids.
  if (r.prompt_ids) {
    DUET_TRY(check_ids(*r.prompt_ids, c.n_vocab, "prompt"));
    g.prompt.assign(r.prompt_ids->begin(), r.prompt_ids->end());
  } else if (r.raw_prompt) {
    // A raw prompt is the client's whole prompt, control tokens included (as Hugging Face's
    // tokenizer.encode and vLLM's completions treat it).
    g.prompt = c.tokenizer->encode_template(r.prompt);
  } else {
    DUET_ASSIGN(ids, render_chat(r, c));
    g.prompt = std::move(ids);
  }
  if (g.prompt.empty()) return Status::error("the prompt is empty");
  const int64_t n_prompt = static_cast<int64_t>(g.prompt.size());
  if (n_prompt >= c.max_context)
    return Status::error("the prompt has " + std::to_string(n_prompt) +
                         " tokens, but this server's context holds " +
                         std::to_string(c.max_context) + " tokens (prompt and output together)");

  // 2. Thinking: the templated prompt decides whether the model may think.
  p.thinking = !r.raw_prompt && r.mode.enabled;
  p.prompt_opened_think = ends_inside_think(g.prompt, c);
  // The output pipeline starts its reasoning tracker from the same state (a non-thinking
  // prompt that somehow leaves <think> open is not reasoning to either).
  g.starts_in_reasoning = p.thinking && p.prompt_opened_think;
  if (p.thinking && r.mode.budget) {
    g.thinking_budget = *r.mode.budget;
    g.budget_closing_tokens = c.tokenizer->encode_template(kThinkingBudgetClosingText);
  }

  // 3. Sampling: what the client left unset follows Qwen3's advice for the mode (raw OpenAI
  // completions keep the API's defaults, temperature 1 and top_p 1).
  g.sampling = r.sampling;
  if (!(r.raw_prompt && r.dialect == Dialect::kOpenAI)) {
    const SamplingDefaults d = sampling_defaults(r.mode.enabled);
    if (!r.has_temperature) g.sampling.temperature = d.temperature;
    if (!r.has_top_p) g.sampling.top_p = d.top_p;
    if (!r.has_top_k) g.sampling.top_k = d.top_k;
    if (!r.has_min_p) g.sampling.min_p = d.min_p;
  }
  DUET_TRY(validate(g.sampling, c.n_vocab));

  // 4. Limits and stop ids.
  DUET_TRY(check_ids(r.stop_token_ids, c.n_vocab, "stop_token_ids"));
  g.stop_token_ids.assign(r.stop_token_ids.begin(), r.stop_token_ids.end());
  g.max_tokens = std::min(r.max_tokens.value_or(c.max_context), c.max_context - n_prompt);
  g.min_tokens = std::min(r.min_tokens, g.max_tokens);
  g.ignore_eos = r.ignore_eos;
  return p;
}

}  // namespace duet
