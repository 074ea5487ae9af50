// duet run: a terminal chat with a model, in process (no HTTP). It goes the server's way
// without the socket: the same request parser (an OpenAI chat body), then the host's
// prepare_generation and start_generation (host/start_generation.h) that the server's routes
// call, so what it shows is what a client of `duet serve` would get. Reasoning is shown apart from
// the answer (dimmed on a terminal, between [thinking] markers otherwise); tokens/s follow each
// reply on stderr.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "api/request_model.h"
#include "cli/commands.h"
#include "host/model_host.h"
#include "host/start_generation.h"

namespace duet::cli {
namespace {

struct RunOptions {
  HostOptions model;   // -m, --think, --backend, --threads, --kv-budget-mb
  std::string prompt;  // empty: read prompts from stdin
  int64_t max_tokens = 512;
  std::string system;
};

// Ctrl-C while a reply streams stops that reply; at the prompt it ends the program as usual.
std::atomic<bool> g_replying{false};
std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) {
  if (g_replying.load()) {
    g_interrupted.store(true);
  } else {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
}

// Where reasoning and answer go. On a terminal reasoning is dimmed (ANSI faint); piped, it
// sits between plain markers so that a reader (or a test) can tell the two apart.
class Printer {
 public:
  explicit Printer(bool tty) : tty_(tty) {}
  void reasoning(const std::string& text) {
    if (text.empty()) return;
    if (!in_reasoning_) {
      std::fputs(tty_ ? "\x1b[2m" : "[thinking]\n", stdout);
      in_reasoning_ = true;
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  void content(const std::string& text) {
    if (text.empty()) return;
    close_reasoning();
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  // A finished tool call, on a line of its own (the model asked for it; nothing runs it here).
  void tool_call(const std::string& name, const std::string& arguments) {
    close_reasoning();
    std::fprintf(stdout, "\n[tool call] %s %s\n", name.c_str(), arguments.c_str());
    std::fflush(stdout);
  }
  void close_reasoning() {
    if (!in_reasoning_) return;
    std::fputs(tty_ ? "\x1b[0m\n" : "\n[/thinking]\n", stdout);
    in_reasoning_ = false;
  }

 private:
  bool tty_;
  bool in_reasoning_ = false;
};

// One reply to the conversation so far; appends the answer to `messages`. Returns false
// when the request itself is refused (the message says why).
bool reply(ModelHost& host, const RunOptions& o, Json& messages, bool tty) {
  auto refuse = [](const std::string& why) {
    fail(why);
    return false;
  };
  Json body = {{"messages", messages}, {"max_tokens", o.max_tokens}};
  auto request = parse_openai_chat(body);
  if (!request) return refuse(request.message());
  auto prepared = prepare_generation(host, *request);
  if (!prepared) return refuse(prepared.message());
  auto running = start_generation(host, *request, *prepared);
  if (!running) return refuse(running.message());
  RequestHandle& handle = *running->handle;
  OutputPipeline& pipeline = *running->output;
  Printer print(tty);
  std::string answer;
  auto show = [&](const OutputDelta& d) {
    print.reasoning(d.reasoning);
    print.content(d.content);
    for (const ParsedToolCall& call : d.finished_calls)
      print.tool_call(call.name, call.arguments_string);
    answer += d.content;
  };

  g_interrupted.store(false);
  g_replying.store(true);
  FinishReason finish = FinishReason::kNone;
  bool cancelled = false, stopped = false;
  TokenEvent ev;
  while (finish == FinishReason::kNone) {
    if (g_interrupted.load() && !cancelled && !stopped) {
      handle.cancel();  // the engine ends it with a final event at its next step
      cancelled = true;
    }
    if (!handle.pop(ev, std::chrono::milliseconds(50))) continue;
    if (!ev.tokens.empty() && !stopped) show(pipeline.push(ev));
    finish = ev.finish;
    if (pipeline.stopped() && !stopped) {
      handle.cancel();  // a stop string: the answer is complete (as the server does)
      stopped = true;
    }
  }
  g_replying.store(false);
  if (!stopped) show(pipeline.finish());
  print.close_reasoning();
  std::fputs("\n", stdout);
  std::fflush(stdout);

  const RequestStats s = handle.stats();
  const Clock::time_point first = s.first_token == Clock::time_point{} ? s.finished : s.first_token;
  const double decode_s = std::chrono::duration<double>(s.finished - first).count();
  const double ttft_ms = std::chrono::duration<double, std::milli>(first - s.submitted).count();
  // Tokens after the first over the time since the first: the decode rate, apart from the
  // prompt's processing (shown as the time to the first token).
  const double rate =
      s.generated_tokens > 1 && decode_s > 0 ? (s.generated_tokens - 1) / decode_s : 0;
  const char* why = stopped                           ? "stop"
                    : cancelled                       ? "interrupted"
                    : finish == FinishReason::kLength ? "length"
                    : finish == FinishReason::kError  ? "error"
                                                      : "stop";
  std::fprintf(stderr, "[%lld tokens, %.1f tokens/s, first token %.0f ms, %s mode, %s]\n",
               static_cast<long long>(s.generated_tokens), rate, ttft_ms,
               request->mode.enabled ? "thinking" : "non-thinking", why);
  if (finish == FinishReason::kError) return refuse("generation failed: " + ev.error);
  messages.push_back({{"role", "assistant"}, {"content", answer}});
  return true;
}

int run_chat(const RunOptions& o) {
  if (Status s = ModelHost::check_options(o.model); !s) return fail(s.message());
  Logger log(Logger::Level::kWarn);  // load messages only when something is wrong
  if (o.model.model_path.empty())
    std::fprintf(stderr,
                 "duet run: no -m given: the built-in demo model (Qwen3 architecture, RANDOM "
                 "weights: its text is noise)\n");
  ModelHost host(o.model, log);
  if (Status s = host.load(); !s) return fail(s.message());

  std::signal(SIGINT, on_sigint);
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  Json messages = Json::array();
  if (!o.system.empty()) messages.push_back({{"role", "system"}, {"content", o.system}});
  if (!o.prompt.empty()) {
    messages.push_back({{"role", "user"}, {"content", o.prompt}});
    return reply(host, o, messages, tty) ? 0 : 1;
  }
  const bool interactive = ::isatty(STDIN_FILENO) == 1;
  if (interactive) std::fputs("duet run: /exit or Ctrl-D quits; Ctrl-C stops a reply\n", stderr);
  std::string line;
  for (;;) {
    if (interactive) std::fputs(">>> ", stdout), std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;
    if (line == "/exit" || line == "/bye") break;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    messages.push_back({{"role", "user"}, {"content", line}});
    if (!reply(host, o, messages, tty)) messages.erase(messages.end() - 1);
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, Action* run, std::function<void(HostOptions&)> adjust) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run", "chat with a model in the terminal: one PROMPT, or a conversation read from stdin");
  cmd->add_option("-m,--model", o->model.model_path,
                  "GGUF model file (default: the built-in demo model, random weights)")
      ->check(CLI::ExistingFile);
  cmd->add_option("prompt", o->prompt,
                  "answer this once and exit (default: read lines from stdin)");
  cmd->add_option("--think", o->model.think, "reasoning mode: on, off or auto (default auto)")
      ->check(CLI::IsMember({"on", "off", "auto"}));
  cmd->add_option("-n,--max-tokens", o->max_tokens, "most tokens per reply (default 512)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  cmd->add_option("--system", o->system, "a system message at the start of the conversation");
  add_backend_option(cmd, &o->model.backend);
  cmd->add_option("-t,--threads", o->model.threads, "compute threads (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--kv-budget-mb", o->model.kv_budget_mb,
                  "memory for the KV cache, MiB (default 1024)")
      ->check(CLI::PositiveNumber);
  cmd->footer(
      "Lines read from stdin are the user's turns of one conversation; /exit or end of input\n"
      "quits. Ctrl-C stops the reply being written. Reasoning is dimmed on a terminal and set\n"
      "between [thinking] and [/thinking] lines otherwise; each reply's token count and\n"
      "tokens/s go to stderr. /think and /no_think in a prompt switch the mode for that turn.");
  cmd->callback([run, o, adjust] {
    if (adjust) adjust(o->model);
    *run = [o] { return run_chat(*o); };
  });
}

}  // namespace duet::cli
