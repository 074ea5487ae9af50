// libFuzzer target: arbitrary bytes as a request body through everything the server does
// before a request reaches the engine — JSON parsing with the depth guard, the four
// dialect adapters, the thinking-mode decision and the prompt builder (Qwen3's built-in
// template rendered with the resolved mode, marked tokenization, id and context checks),
// over a byte vocabulary. Beyond "no crash, no sanitizer report", it traps when a request
// that was accepted breaks an invariant the engine relies on: prompt ids inside the
// vocabulary, a prompt that fits the context, max_tokens ≥ 1 within what is left, and
// sampling parameters that pass validate().
//
//   build-fuzz/fuzz_request -max_total_time=60 <corpus copy>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "api/prompt_builder.h"
#include "api/request_model.h"
#include "forge/forge.h"
#include "gguf/gguf_file.h"
#include "text/template/chat_template.h"

namespace {

using namespace duet;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

struct World {
  std::string gguf_bytes;
  std::unique_ptr<GgufFile> gguf;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<ChatTemplate> chat_template;
  PromptContext context;
};

// The demo model's vocabulary (bytes + Qwen3's added tokens), read back from a forged file.
World* make_world() {
  auto* w = new World;
  ForgeOptions o;
  o.shape.n_layer = 1;
  o.shape.n_embd = 32;
  o.shape.n_head = 2;
  o.shape.n_head_kv = 1;
  o.shape.head_dim = 16;
  o.shape.n_ff = 32;
  o.shape.n_ctx = 512;
  ForgeVocab vocab = make_byte_vocab();
  o.shape.n_vocab = static_cast<int64_t>(vocab.tokens.size());
  const std::string path = "/tmp/fuzz_request_vocab_" + std::to_string(::getpid()) + ".gguf";
  check(forge_model(o, vocab, path).is_ok());
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  ::unlink(path.c_str());
  w->gguf_bytes = ss.str();
  auto g = GgufFile::parse(std::span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(w->gguf_bytes.data()), w->gguf_bytes.size()));
  check(g.is_ok());
  w->gguf = std::make_unique<GgufFile>(std::move(g.value()));
  auto t = Tokenizer::from_gguf(*w->gguf);
  check(t.is_ok());
  w->tokenizer = std::make_unique<Tokenizer>(std::move(t.value()));
  auto tpl = ChatTemplate::create(builtin_qwen3_template());
  check(tpl.is_ok());
  w->chat_template = std::make_unique<ChatTemplate>(std::move(tpl.value()));
  PromptContext& c = w->context;
  c.tokenizer = w->tokenizer.get();
  c.chat_template = w->chat_template.get();
  c.n_vocab = w->tokenizer->n_vocab();
  c.max_context = 512;
  c.im_start = *w->tokenizer->find_token("<|im_start|>");
  c.think_open = *w->tokenizer->find_token("<think>");
  c.think_close = *w->tokenizer->find_token("</think>");
  return w;
}

void run(const World& w, const Json& body,
         Result<ApiRequest> (*parse)(const Json&, const RequestLimits&), ThinkDefault think) {
  auto r = parse(body, RequestLimits{});
  if (!r) {
    check(!r.message().empty());
    return;
  }
  ApiRequest& req = r.value();
  if (req.load_only) return;
  decide_mode(req, think);
  auto p = prepare_request(req, w.context);
  if (!p) {
    check(!p.message().empty());
    return;
  }
  const GenerateRequest& g = p->gen;
  check(!g.prompt.empty());
  check(static_cast<int64_t>(g.prompt.size()) < w.context.max_context);
  for (int32_t id : g.prompt) check(id >= 0 && id < w.context.n_vocab);
  for (int32_t id : g.stop_token_ids) check(id >= 0 && id < w.context.n_vocab);
  check(g.max_tokens >= 1);
  check(g.max_tokens <= w.context.max_context - static_cast<int64_t>(g.prompt.size()));
  check(g.min_tokens >= 0 && g.min_tokens <= g.max_tokens);
  check(validate(g.sampling, w.context.n_vocab).is_ok());
  if (g.thinking_budget) check(*g.thinking_budget >= 0 && !g.budget_closing_tokens.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const World* world = make_world();
  if (size > (1u << 16)) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto body = parse_request_body(text);
  if (!body) return 0;
  const ThinkDefault think = size % 3 == 0   ? ThinkDefault::kOn
                             : size % 3 == 1 ? ThinkDefault::kOff
                                             : ThinkDefault::kAuto;
  run(*world, *body, &parse_openai_chat, think);
  run(*world, *body, &parse_openai_completion, think);
  run(*world, *body, &parse_ollama_chat, think);
  run(*world, *body, &parse_ollama_generate, think);
  return 0;
}
