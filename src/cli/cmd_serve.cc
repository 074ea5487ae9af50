// duet serve: the HTTP server (OpenAI and Ollama APIs, metrics, probes) on one port.
#include <cstdio>
#include <memory>
#include <set>

#include "cli/commands.h"
#include "cli/common/host_flags.h"
#include "cli/common/option_sources.h"
#include "server/app.h"

namespace duet::cli {

void add_serve_command(CLI::App& app, Action* run, std::function<void(HostOptions&)> adjust) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "serve a model over HTTP: OpenAI and Ollama APIs, /metrics, /health, /ready");
  // Every flag also comes from DUET_<FLAG> or the config file (cli/common/option_sources.h).
  auto config = std::make_shared<std::string>();
  auto print_config = std::make_shared<bool>(false);
  cmd->add_option("--config", *config,
                  "a TOML file of flags (ctx-size = 8192, think = \"off\", ...; keys at the\n"
                  "top or under [serve]); the command line, then DUET_<FLAG> variables\n"
                  "(DUET_CTX_SIZE), then the file, then the defaults")
      ->envname("DUET_CONFIG");
  cmd->add_flag("--print-config", *print_config,
                "print the effective flags and where each came from, then exit");
  cmd->add_option("-m,--model", o->model.model_path,
                  "GGUF model file (default: the built-in demo model, random weights)");
  cmd->add_option("--name", o->model.model_name,
                  "the model's name in the API (default: from the file)");
  cmd->add_option("--host", o->host, "address to bind (default 127.0.0.1: this machine only)");
  cmd->add_option("--port", o->port, "port (default 8080; 0 picks a free one)");
  cmd->add_option("--api-key", o->api_keys,
                  "require 'Authorization: Bearer KEY' on every route but /health and the\n"
                  "chat page's files (repeatable; KEY,KEY... for several; any one is accepted)");
  cmd->add_option("--api-key-file", o->api_key_file,
                  "API keys from a file too: one per line; blank lines and # comments ignored");
  cmd->add_option("--think", o->model.think,
                  "default reasoning mode when a request does not say: on, off or auto")
      ->check(CLI::IsMember({"on", "off", "auto"}));
  cmd->add_option("--client-added-tokens", o->model.client_added_tokens,
                  "added tokens typed in client text (messages, tools, prefills):\n"
                  "none (default): all of it is plain text, so <think> or <tool_call> typed\n"
                  "by a user is text, never the token; non-special: the non-special added\n"
                  "tokens (<think>, </think>, <tool_call>, <tool_response>, <|fim_prefix|>...)\n"
                  "become their ids, as Hugging Face's tokenizer does. Control tokens\n"
                  "(<|im_start|>, <|im_end|>, <|endoftext|>...) never match in client text.")
      ->check(CLI::IsMember({"none", "non-special"}));
  add_capacity_options(cmd, &o->model);
  cmd->add_option("--max-batch-tokens", o->model.max_batch_tokens,
                  "tokens computed per engine step, decode and prefill (default 512)");
  cmd->add_option("--request-timeout", o->model.request_timeout_seconds,
                  "seconds a request may take, queue and prefill included, before it ends\n"
                  "as a length stop (finish_reason / done_reason \"length\"); default 0: no\n"
                  "limit but max_tokens, which is capped at what the context has left")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-jump-forward", o->model.no_jump_forward,
                "structured output: sample every token, also where the grammar forces the\n"
                "text (by default forced text, such as a property name, is appended unsampled)");
  cmd->add_option("--max-queue", o->max_queue,
                  "requests that may wait beyond --max-running; more get 429 (default 64)");
  cmd->add_option("-t,--threads", o->model.threads, "compute threads (default: all cores)");
  cmd->add_option("--http-threads", o->http_threads, "HTTP I/O threads (default 2)");
  cmd->add_option("--cors-origin", o->cors_origins,
                  "allow cross-origin browser requests from this origin (repeatable; * for any)");
  cmd->add_option("--drain-seconds", o->drain_seconds,
                  "on SIGTERM/SIGINT, how long in-flight requests may take to finish (default 30)");
  cmd->add_flag("--debug-timestamps", o->debug_timestamps,
                "add the server's emit times to every streamed chunk (latency tests)");
  cmd->add_option("--debug-step-pause-ms", o->model.debug_step_pause_ms,
                  "pause after every engine step, ms (paces generation for latency tests)");
  cmd->add_option("--rope-scale", o->model.rope_scale, "turn YaRN on with this factor (e.g. 4)");
  cmd->add_option("--max-body-kb", o->max_body_kb, "largest request body, KiB (default 8192)");
  cmd->add_option("--read-timeout", o->read_timeout_seconds,
                  "seconds a client may take to send one request (default 30)");
  cmd->add_option("--max-connections", o->max_connections, "open connections (default 512)");
  cmd->add_option("--max-connections-per-client", o->max_connections_per_client,
                  "open connections from one address (default 256; 0: only --max-connections);\n"
                  "behind a reverse proxy every client has the proxy's address");
  cmd->add_option("--first-byte-timeout", o->first_byte_timeout_seconds,
                  "seconds a new connection may wait before it sends anything (default 5)");
  cmd->add_option(
      "--sse-keepalive-ms", o->sse_keepalive_ms,
      "keep-alive interval while a prompt prefills, ms (SSE comment; empty Ollama line)\n"
      "(default 5000; 0 off)");
  add_backend_option(cmd, &o->model.backend);
  cmd->footer(
      "Reasoning modes, per request (first present wins): chat_template_kwargs.enable_thinking;\n"
      "think (Ollama: true|false|\"low\"|\"medium\"|\"high\"|\"max\"), enable_thinking, mode\n"
      "(\"thinking\"|\"non_thinking\"|\"auto\"), options.thinking_mode (the same, or\n"
      "true|false), reasoning_effort; then /think or\n"
      "/no_think in the messages; then a mode-pinned model name (every model M is also served\n"
      "as M-thinking and M-fast, qwen3:14b-fast); then --think. thinking_budget /\n"
      "thinking_token_budget cap the reasoning tokens. Every response says which mode ran and\n"
      "why: the \"duet\" object of the final chunk or body, and the X-Duet-Thinking-Mode header.\n"
      "Reasoning output: reasoning_content + reasoning (OpenAI), thinking (Ollama);\n"
      "\"reasoning_format\": \"raw\" keeps it inline as <think>...</think> in the content;\n"
      "\"include_reasoning\": false drops it. continue_final_message (OpenAI) or a final "
      "assistant\n"
      "message (Ollama) continues that message (a prefill).");
  cmd->callback([run, o, adjust, cmd, config, print_config] {
    // llama-server's spellings of --kv-type are for the command line only.
    const std::set<std::string> skip = {"config", "print-config", "cache-type-k", "cache-type-v"};
    OptionSources sources(std::set<std::string>{"api-key"});
    if (Status s = sources.apply(*cmd, *config, skip); !s) {
      *run = [s] { return fail(s.message()); };
      return;
    }
    if (*print_config) {
      const std::string text = sources.print(*cmd, skip);
      *run = [text] {
        std::fputs(text.c_str(), stdout);
        return 0;
      };
      return;
    }
    if (adjust) adjust(o->model);
    *run = [o] { return run_serve(*o); };
  });
}

}  // namespace duet::cli
