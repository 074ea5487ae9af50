// /tokenize and /detokenize, in the shapes llama-server and vLLM give them (the same paths):
//   llama-server: {"content": TEXT, "add_special": bool, "parse_special": bool, "with_pieces":
//     bool} -> {"tokens": [ids]} or, with pieces, [{"id", "piece"}] (the piece as a string, or
//     its bytes when they are not UTF-8 on their own); {"tokens": [ids]} -> {"content": TEXT}.
//   vLLM: {"model", "prompt": TEXT} or {"model", "messages": [...], "add_generation_prompt",
//     ...: what /v1/chat/completions takes} -> {"count", "max_model_len", "tokens",
//     "token_strs"}; {"model", "tokens"} -> {"prompt": TEXT}.
// A messages body is rendered exactly as a chat request with the same fields would be (mode,
// a mode-pinned model name, tools, template), so its count is the prompt_tokens such a request
// reports. Qwen3 has no
// BOS token, so add_special and add_special_tokens add nothing. Bodies are tokenized on the
// prep workers, off the I/O threads.
#include "api/request_model.h"
#include "host/start_generation.h"
#include "server/front_door.h"
#include "server/routes.h"
#include "text/tokenizer/unicode.h"

namespace duet {
namespace {

using json = nlohmann::ordered_json;

json piece_of(const Tokenizer& tok, int32_t id) {
  const std::string_view bytes = tok.token_bytes(id);
  if (is_valid_utf8(bytes)) return std::string(bytes);
  json out = json::array();
  for (char c : bytes) out.push_back(static_cast<uint8_t>(c));
  return out;
}

Result<std::string> tokenize(ServerContext& ctx, const Json& body) {
  const Tokenizer& tok = ctx.host.tokenizer();
  if (const Json* content = find_field(body, "content")) {  // llama-server
    if (!content->is_string()) return Status::error("\"content\" must be a string");
    DUET_ASSIGN(parse_special, get_bool(body, "parse_special"));
    DUET_ASSIGN(with_pieces, get_bool(body, "with_pieces"));
    DUET_ASSIGN(add_special, get_bool(body, "add_special"));
    (void)add_special;  // no BOS to add
    const std::string& text = content->get_ref<const std::string&>();
    const std::vector<int32_t> ids =
        parse_special.value_or(true) ? tok.encode_template(text) : tok.encode_user(text);
    json tokens = json::array();
    for (int32_t id : ids)
      tokens.push_back(with_pieces.value_or(false) ? json{{"id", id}, {"piece", piece_of(tok, id)}}
                                                   : json(id));
    return json{{"tokens", tokens}}.dump();
  }
  // vLLM: a prompt is rendered as /v1/completions renders it, messages as
  // /v1/chat/completions does.
  const bool chat = find_field(body, "messages") != nullptr;
  if (!chat && find_field(body, "prompt") == nullptr)
    return Status::error("give \"content\" (llama-server), \"prompt\" or \"messages\" (vLLM)");
  DUET_ASSIGN(token_strs, get_bool(body, "return_token_strs"));
  auto request = chat ? parse_openai_chat(body, RequestLimits{})
                      : parse_openai_completion(body, RequestLimits{});
  if (!request) return request.status();
  apply_model_pin(match_model_name(request->model, ctx.host.info().name), request.value());
  auto prepared = prepare_generation(ctx.host, request.value());
  if (!prepared) return prepared.status();
  const std::vector<int32_t>& ids = prepared->gen.prompt;
  json out = {{"count", ids.size()},
              {"max_model_len", ctx.host.info().context_length},
              {"tokens", ids},
              {"token_strs", nullptr}};
  if (token_strs.value_or(false)) {
    json pieces = json::array();
    for (int32_t id : ids) pieces.push_back(std::string(tok.token_text(id)));
    out["token_strs"] = std::move(pieces);
  }
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<std::string> detokenize(ServerContext& ctx, const Json& body) {
  const Json* tokens = find_field(body, "tokens");
  if (tokens == nullptr || !tokens->is_array())
    return Status::error("\"tokens\" must be an array of token ids");
  const Tokenizer& tok = ctx.host.tokenizer();
  std::vector<int32_t> ids;
  ids.reserve(tokens->size());
  for (const Json& t : *tokens) {
    // llama-server also takes {"id", "piece"} objects, as with_pieces gives them back.
    const Json* id = t.is_object() ? find_field(t, "id") : &t;
    if (id == nullptr || !id->is_number_integer() || id->get<int64_t>() < 0 ||
        id->get<int64_t>() >= tok.n_vocab())
      return Status::error("\"tokens\" must hold token ids from 0 to " +
                           std::to_string(tok.n_vocab() - 1));
    ids.push_back(static_cast<int32_t>(id->get<int64_t>()));
  }
  DUET_ASSIGN(bytes, tok.decode(ids));
  std::string text;
  append_utf8_lossy(&text, bytes);
  // Both servers' field: llama-server's content, vLLM's prompt.
  return json{{"content", text}, {"prompt", text}}.dump();
}

using Work = Result<std::string> (*)(ServerContext&, const Json&);

// On a prep worker: the body read, the model checked (vLLM sends one), the work done.
std::pair<int, std::string> answer(ServerContext& ctx, const HttpRequest& http, Work work) {
  auto body = parse_request_body(http.body);
  if (!body) return {400, body.message()};
  if (!body->is_object()) return {400, "the body must be a JSON object"};
  const Json* model = find_field(*body, "model");
  const std::string& served = ctx.host.info().name;
  if (model != nullptr && !model->is_string()) return {400, "\"model\" must be a string"};
  if (model != nullptr && !model_name_matches(model->get<std::string>(), served))
    return {404, "model not found; this server serves '" + served + "'"};
  auto out = work(ctx, *body);
  if (!out) return {400, out.message()};
  return {200, std::move(out.value())};
}

void serve(ServerContext& ctx, const std::shared_ptr<Exchange>& ex, Work work) {
  if (!ctx.host.loaded())
    return respond_error(*ex, 503, "the model is still loading; try again shortly");
  ctx.prep.submit([&ctx, ex, work] {
    auto a = std::make_shared<std::pair<int, std::string>>(answer(ctx, ex->request(), work));
    ex->post([ex, a] {
      if (a->first != 200) return respond_error(*ex, a->first, a->second);
      ex->respond(json_response(200, std::move(a->second)));
    });
  });
}

}  // namespace

void add_tokenize_routes(Router& router, ServerContext& ctx) {
  router.add("POST", "/tokenize",
             [&ctx](const std::shared_ptr<Exchange>& ex) { serve(ctx, ex, &tokenize); });
  router.add("POST", "/detokenize",
             [&ctx](const std::shared_ptr<Exchange>& ex) { serve(ctx, ex, &detokenize); });
}

}  // namespace duet
