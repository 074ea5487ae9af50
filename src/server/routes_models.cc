// What the server serves: /v1/models (OpenAI), /api/tags, /api/show, /api/ps and
// /api/version (Ollama). The name carries a tag in Ollama's listings ("qwen3-demo:latest"),
// since Open WebUI appends ":latest" to names without one. The listings hold the model under
// its own name and its mode-pinned names (M-thinking, M-fast: api/request_model.h), so a user
// picks a mode from a client's model list; /api/ps lists what is loaded, the model itself.
#include <ctime>
#include <nlohmann/json.hpp>

#include "api/request_model.h"
#include "server/front_door.h"
#include "server/routes.h"

namespace duet {
namespace {

using json = nlohmann::ordered_json;

std::string rfc3339(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string tagged(const std::string& name) {
  return name.find(':') == std::string::npos ? name + ":latest" : name;
}

std::string pin_description(const std::string& name) {
  return name.ends_with("-thinking")
             ? "thinks before every answer unless the request says otherwise"
             : "answers without thinking unless the request says otherwise";
}

json ollama_details(const ModelInfo& m) {
  return {{"parent_model", ""},
          {"format", "gguf"},
          {"family", "qwen3"},
          {"families", json::array({"qwen3"})},
          {"parameter_size", m.parameter_size},
          {"quantization_level", m.quantization}};
}

// `name`: the model's own name, or a mode-pinned one (whose parent is the model).
json openai_model(const ModelInfo& m, const std::string& name) {
  const bool pinned = name != m.name;
  return {{"id", name},
          {"object", "model"},
          {"created", m.created},
          {"owned_by", m.owned_by},
          {"root", m.name},
          {"parent", pinned ? json(m.name) : json(nullptr)},
          {"max_model_len", m.context_length},
          {"description", pinned ? pin_description(name) : m.description}};
}

bool not_loaded(ServerContext& ctx, Exchange& ex) {
  if (ctx.host.loaded()) return false;
  respond_error(ex, 503, "the model is still loading; try again shortly");
  return true;
}

}  // namespace

void add_model_routes(Router& router, ServerContext& ctx) {
  router.add("GET", "/v1/models", [&ctx](const std::shared_ptr<Exchange>& ex) {
    if (not_loaded(ctx, *ex)) return;
    const ModelInfo& info = ctx.host.info();
    // The model under its own name first, then its mode-pinned names.
    const std::vector<std::string> names = served_model_names(info.name);
    json data = json::array({openai_model(info, info.name)});
    for (size_t i = 1; i < names.size(); ++i) data.push_back(openai_model(info, names[i]));
    ex->respond(json_response(200, json{{"object", "list"}, {"data", data}}.dump()));
  });
  router.add_prefix("GET", "/v1/models/", [&ctx](const std::shared_ptr<Exchange>& ex) {
    if (not_loaded(ctx, *ex)) return;
    const std::string id = ex->request().path.substr(std::string_view("/v1/models/").size());
    const ModelInfo& info = ctx.host.info();
    const ModelNameMatch match = match_model_name(id, info.name);
    if (id.empty() || !match.matches)
      return respond_error(*ex, 404, "model not found; this server serves '" + info.name + "'");
    const std::vector<std::string> names = served_model_names(info.name);
    const std::string& name = !match.thinking ? info.name : *match.thinking ? names[1] : names[2];
    ex->respond(json_response(200, openai_model(info, name).dump()));
  });
  router.add("GET", "/api/tags", [&ctx](const std::shared_ptr<Exchange>& ex) {
    if (not_loaded(ctx, *ex)) return;
    const ModelInfo& m = ctx.host.info();
    const std::vector<std::string> names = served_model_names(m.name);
    json models = json::array();
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string listed = tagged(i == 0 ? m.name : names[i]);
      json model = {
          {"name", listed},       {"model", listed},    {"modified_at", rfc3339(m.created)},
          {"size", m.size_bytes}, {"digest", m.digest}, {"details", ollama_details(m)}};
      if (i > 0)
        model["description"] = pin_description(names[i]);
      else if (m.demo)
        model["description"] = m.description;
      models.push_back(std::move(model));
    }
    ex->respond(json_response(200, json{{"models", models}}.dump()));
  });
  router.add("GET", "/api/ps", [&ctx](const std::shared_ptr<Exchange>& ex) {
    if (not_loaded(ctx, *ex)) return;
    const ModelInfo& m = ctx.host.info();
    json model = {{"name", tagged(m.name)},
                  {"model", tagged(m.name)},
                  {"size", m.size_bytes},
                  {"digest", m.digest},
                  {"details", ollama_details(m)},
                  {"expires_at", "2318-01-01T00:00:00Z"},  // never unloaded
                  {"size_vram", 0},
                  {"context_length", m.context_length}};
    ex->respond(json_response(200, json{{"models", json::array({model})}}.dump()));
  });
  router.add("POST", "/api/show", [&ctx](const std::shared_ptr<Exchange>& ex) {
    if (not_loaded(ctx, *ex)) return;
    auto parsed = parse_request_body(ex->request().body);
    if (!parsed) return respond_error(*ex, 400, parsed.message());
    const json& body = parsed.value();
    const json* name = nullptr;
    for (const char* key : {"model", "name"})
      if (const json* v = find_field(body, key); v && v->is_string()) {
        name = v;
        break;
      }
    if (name == nullptr) return respond_error(*ex, 400, "\"model\" is required");
    const ModelInfo& m = ctx.host.info();
    if (!model_name_matches(name->get<std::string>(), m.name))
      return respond_error(*ex, 404, "model not found; this server serves " + tagged(m.name));
    const Qwen3Config& c = ctx.host.config();
    json info = {{"general.architecture", "qwen3"},
                 {"general.parameter_count", m.parameter_size},
                 {"qwen3.context_length", m.context_length},
                 {"qwen3.embedding_length", c.n_embd},
                 {"qwen3.block_count", c.n_layer},
                 {"qwen3.attention.head_count", c.n_head},
                 {"qwen3.attention.head_count_kv", c.n_head_kv},
                 {"qwen3.feed_forward_length", c.n_ff},
                 {"tokenizer.ggml.model", "gpt2"},
                 {"tokenizer.ggml.vocab_size", c.n_vocab}};
    json out = {{"modelfile", ""},
                {"parameters", ""},
                {"template", m.chat_template},
                {"details", ollama_details(m)},
                {"model_info", info},
                {"capabilities", json::array({"completion", "tools", "thinking"})},
                {"modified_at", rfc3339(m.created)}};
    if (m.demo) out["description"] = m.description;
    ex->respond(json_response(200, out.dump(-1, ' ', false, json::error_handler_t::replace)));
  });
  router.add("GET", "/api/version", [](const std::shared_ptr<Exchange>& ex) {
    ex->respond(json_response(200, R"({"version":"0.1.0"})"));
  });
}

}  // namespace duet
