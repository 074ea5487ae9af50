// duet render -m FILE | --template PATH | --tokenizer-config PATH [--jsonl]
// A chat request (JSON) on stdin → the prompt text the model sees, exactly (no newline
// added). The template comes from --template, else --tokenizer-config, else the GGUF
// file's tokenizer.chat_template, else Qwen3's built-in template. With --jsonl, every
// stdin line is a request and every stdout line the JSON string of its prompt (or
// {"error": …}), so that a test can render thousands of prompts in one process.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "gguf/gguf_file.h"
#include "text/template/chat_template.h"
#include "text/tokenizer/vocab.h"

namespace duet::cli {
namespace {

using ojson = nlohmann::ordered_json;

struct RenderArgs {
  std::string model;
  std::string template_path;
  std::string tokenizer_config;
  bool jsonl = false;
};

struct TemplateSource {
  std::string text;
  std::optional<std::string> bos, eos;  // the model's, used when a request names none
};

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// tokenizer_config.json's chat_template: a string, or a list of {name, template}.
Result<std::string> template_from_tokenizer_config(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.status();
  const ojson j = ojson::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::error(path + " is not a JSON object");
  const auto t = j.find("chat_template");
  if (t == j.end()) return Status::error(path + " has no chat_template");
  if (t->is_string()) return t->get<std::string>();
  if (t->is_array()) {
    const ojson* chosen = nullptr;
    for (const auto& e : *t) {
      if (!e.is_object() || !e.contains("template") || !e["template"].is_string()) continue;
      if (!chosen || (e.contains("name") && e["name"] == "default")) chosen = &e;
    }
    if (chosen) return (*chosen)["template"].get<std::string>();
  }
  return Status::error(path + ": chat_template is neither a string nor a list of templates");
}

Result<TemplateSource> load_template(const RenderArgs& a) {
  TemplateSource src;
  if (!a.model.empty()) {
    auto file = GgufModelFile::open(a.model);
    if (!file) return Status::error("cannot read " + a.model + ": " + file.message());
    const GgufFile& g = (*file)->gguf();
    if (const GgufValue* v = g.find("tokenizer.chat_template"); v && v->as_string())
      src.text = std::string(*v->as_string());
    else
      src.text = std::string(builtin_qwen3_template());
    if (auto vocab = read_vocab(g)) {
      if (vocab->bos_id >= 0) src.bos = std::string(vocab->tokens[vocab->bos_id]);
      if (vocab->eos_id >= 0) src.eos = std::string(vocab->tokens[vocab->eos_id]);
    }
  }
  if (!a.template_path.empty()) {
    auto text = read_file(a.template_path);
    if (!text) return text.status();
    src.text = std::move(text.value());
  } else if (!a.tokenizer_config.empty()) {
    auto text = template_from_tokenizer_config(a.tokenizer_config);
    if (!text) return text.status();
    src.text = std::move(text.value());
  }
  return src;
}

Status optional_string(const ojson& req, const char* key, std::optional<std::string>& out) {
  const auto it = req.find(key);
  if (it == req.end() || it->is_null()) return {};
  if (!it->is_string()) return Status::error(std::string(key) + " must be a string");
  out = it->get<std::string>();
  return {};
}

Status optional_bool(const ojson& req, const char* key, std::optional<bool>& out) {
  const auto it = req.find(key);
  if (it == req.end() || it->is_null()) return {};
  if (!it->is_boolean()) return Status::error(std::string(key) + " must be true or false");
  out = it->get<bool>();
  return {};
}

Result<std::string> render_request(const ChatTemplate& t, const TemplateSource& src,
                                   std::string_view body) {
  const ojson req = ojson::parse(body, nullptr, /*allow_exceptions=*/false);
  if (req.is_discarded()) return Status::error("the request is not valid JSON");
  if (!req.is_object()) return Status::error("the request must be a JSON object");
  const auto messages = req.find("messages");
  if (messages == req.end()) return Status::error("the request has no messages");
  const ojson tools = req.contains("tools") ? req["tools"] : ojson();

  ChatTemplateOptions opt;
  opt.bos_token = src.bos;
  opt.eos_token = src.eos;
  std::optional<bool> add_generation_prompt;
  DUET_TRY(optional_bool(req, "add_generation_prompt", add_generation_prompt));
  opt.add_generation_prompt = add_generation_prompt.value_or(true);
  DUET_TRY(optional_bool(req, "enable_thinking", opt.enable_thinking));
  DUET_TRY(optional_string(req, "bos_token", opt.bos_token));
  DUET_TRY(optional_string(req, "eos_token", opt.eos_token));
  DUET_TRY(optional_string(req, "date_string", opt.date_string));
  if (const auto kw = req.find("chat_template_kwargs"); kw != req.end() && !kw->is_null()) {
    if (!kw->is_object()) return Status::error("chat_template_kwargs must be an object");
    DUET_TRY(optional_bool(*kw, "enable_thinking", opt.enable_thinking)
                 .with_context("chat_template_kwargs"));
    opt.extra_kwargs = *kw;
  }
  return t.render(*messages, tools, opt);
}

int run_render(const RenderArgs& a) {
  if (a.model.empty() && a.template_path.empty() && a.tokenizer_config.empty())
    return fail("render needs a template: -m FILE, --template PATH or --tokenizer-config PATH");
  auto src = load_template(a);
  if (!src) return fail(src.message());
  auto t = ChatTemplate::create(src->text);
  if (!t) return fail(t.message());

  if (!a.jsonl) {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    auto prompt = render_request(*t, *src, ss.str());
    if (!prompt) return fail(prompt.message());
    std::fwrite(prompt->data(), 1, prompt->size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : fail("cannot write the prompt");
  }
  int rc = 0;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto prompt = render_request(*t, *src, line);
    ojson out;
    if (prompt) {
      out = prompt.value();
    } else {
      out = ojson{{"error", prompt.message()}};
      rc = 1;
    }
    const std::string text = out.dump(-1, ' ', false, ojson::error_handler_t::replace);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
  }
  return std::fflush(stdout) == 0 ? rc : fail("cannot write the prompts");
}

}  // namespace

void add_render_command(CLI::App& app, Action* run) {
  auto args = std::make_shared<RenderArgs>();
  CLI::App* cmd = app.add_subcommand(
      "render", "a chat request (JSON on stdin) → the prompt text the model sees");
  cmd->add_option("-m,--model", args->model, "GGUF file whose chat template (and bos/eos) to use");
  cmd->add_option("--template", args->template_path, "a Jinja chat template file instead");
  cmd->add_option("--tokenizer-config", args->tokenizer_config,
                  "a tokenizer_config.json whose chat_template to use");
  cmd->add_flag("--jsonl", args->jsonl,
                "one request per line in, one JSON-string prompt per line out");
  cmd->callback([run, args] { *run = [args] { return run_render(*args); }; });
}

}  // namespace duet::cli
