// ApiRequest → the engine's GenerateRequest: renders the chat template (with the mode's
// enable_thinking), tokenizes, checks ids and the context, fills the sampling defaults of
// the mode the request runs in, and sets up the thinking budget.
//
// Every string a client supplies — message text and names, tool names, descriptions and
// schemas, tool-call arguments and their keys, chat_template_kwargs, a prefill — is client
// text wherever the template puts it: the template renders with provenance
// (ChatTemplate::render_marked) and the tokenizer matches added tokens only in the bytes
// the template wrote (Tokenizer::encode_marked). No escaping, so no client text can defeat
// it, and the work is linear in the size of the request.
#pragma once

#include <cstdint>
#include <string>

#include "api/request_model.h"
#include "engine/request.h"
#include "text/template/chat_template.h"
#include "text/tokenizer/bpe_tokenizer.h"

namespace duet {

// What the builder needs to know about the served model.
struct PromptContext {
  const Tokenizer* tokenizer = nullptr;
  const ChatTemplate* chat_template = nullptr;
  int64_t n_vocab = 0;
  int64_t max_context = 0;  // tokens one sequence may hold on this server
  int32_t im_start = -1, think_open = -1, think_close = -1;
  // Which added tokens may match in client text (`duet serve --client-added-tokens`).
  ClientAddedTokens client_added_tokens = ClientAddedTokens::kNone;
};

struct PreparedRequest {
  GenerateRequest gen;
  // The prompt leaves the model inside <think> (a prefill that opens it): the output starts
  // as reasoning.
  bool prompt_opened_think = false;
  // The prompt lets the model think (a thinking-mode chat prompt); false for non-thinking
  // prompts, which end with an empty think block.
  bool thinking = false;
};

// Errors are the client's (400): a template that cannot render these messages, ids outside
// the vocabulary, a prompt longer than the context (with the token counts), ...
Result<PreparedRequest> prepare_request(const ApiRequest& request, const PromptContext& context);

}  // namespace duet
