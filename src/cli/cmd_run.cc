// duet run: a terminal chat with a model — the one in this process (run/local_chat.h), or a
// running server's (--url, run/remote_chat.h). The conversation, its settings and the /commands
// are run/chat_session.h's; what the user types is run/line_input.h's; how a reply looks is
// run/reply_printer.h's. Each reply's token count and tokens/s follow it on stderr.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common/host_flags.h"
#include "cli/run/chat_session.h"
#include "cli/run/line_input.h"
#include "cli/run/local_chat.h"
#include "cli/run/remote_chat.h"
#include "cli/run/reply_printer.h"
#include "cli/run/terminal_text.h"
#include "host/model_host.h"

namespace duet::cli {
namespace {

constexpr const char* kDefaultServerUrl = "http://127.0.0.1:8080";

struct RunOptions {
  HostOptions model;  // -m, --backend, --threads, --kv-budget-mb
  ChatSettings chat;
  std::vector<std::string> words;  // [MODEL] [PROMPT] with --url, else [PROMPT]
  std::string url;
  std::string api_key;
  std::string model_arg;  // -m as given: a file, or with --url a model name
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

const char* end_name(ReplyOutcome::End end) {
  switch (end) {
    case ReplyOutcome::End::kStop:
      return "stop";
    case ReplyOutcome::End::kLength:
      return "length";
    case ReplyOutcome::End::kToolCalls:
      return "tool_calls";
    case ReplyOutcome::End::kInterrupted:
      return "interrupted";
    case ReplyOutcome::End::kTooLong:
    case ReplyOutcome::End::kError:
      return "error";
  }
  return "error";
}

// An error for the user. With --url it may carry a server's text (an error body, a model id):
// on a terminal it is escaped like model text.
int say_error(const std::string& message) {
  return fail(::isatty(STDERR_FILENO) == 1 ? escape_for_terminal(message) : message);
}

// Answers the conversation's last user turn. When the conversation no longer fits the
// context, its oldest turns go (the system message stays) and a note says how many. Returns
// false when the request is refused; the user turn is then taken back.
bool answer(ChatBackend& backend, Conversation& conversation, const ChatSettings& settings,
            bool tty) {
  int dropped = 0;
  bool keep_all = false;
  ReplyOutcome out;
  ReplyPrinter printer(stdout, tty);
  g_interrupted.store(false);  // once: a Ctrl-C between two attempts still counts
  for (;;) {
    g_replying.store(true);
    out = backend.reply(conversation.request_body(settings), printer, g_interrupted, keep_all);
    g_replying.store(false);
    if (out.end != ReplyOutcome::End::kTooLong) break;
    if (conversation.drop_oldest_turn()) {
      ++dropped;
    } else if (!keep_all) {
      keep_all = true;  // nothing older to drop: send what fits
    } else {
      break;
    }
  }
  const bool failed =
      out.end == ReplyOutcome::End::kTooLong || out.end == ReplyOutcome::End::kError;
  if (!failed || out.tokens > 0) printer.end();  // the reply's line ends before any note
  if (dropped > 0)
    print_note("[left out the " + std::to_string(dropped) + " oldest turn" +
               (dropped == 1 ? "" : "s") + " to fit the context]");
  if (failed) {
    conversation.drop_last();
    say_error(out.error);
    return false;
  }
  char stats[200];
  std::snprintf(stats, sizeof stats,
                "[%lld tokens, %.1f tokens/s, first token %.0f ms, %s mode, %s]",
                static_cast<long long>(out.tokens), out.tokens_per_s, out.first_token_ms,
                out.thinking ? "thinking" : "non-thinking", end_name(out.end));
  print_note(stats);
  conversation.add_assistant(out.answer);
  return true;
}

int converse(ChatBackend& backend, RunOptions& o, const std::string& prompt) {
  std::signal(SIGINT, on_sigint);
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  Conversation conversation;
  if (!prompt.empty()) {
    conversation.add_user(prompt);
    return answer(backend, conversation, o.chat, tty) ? 0 : 1;
  }
  const bool interactive = ::isatty(STDIN_FILENO) == 1;
  if (interactive) print_note("duet run: /help lists the commands; /bye or Ctrl-D quits");
  LineInput input(interactive, interactive ? default_history_path() : "");
  while (auto text = input.next()) {
    const CommandResult command = run_command(*text, o.chat, conversation);
    using Kind = CommandResult::Kind;
    if (command.kind == Kind::kQuit) break;
    if (command.kind == Kind::kError) {
      say_error(command.message);
      continue;
    }
    if (command.kind == Kind::kDone) {
      if (command.message.find('\n') != std::string::npos) {  // /help, /show (a model's id)
        const std::string text = tty ? escape_for_terminal(command.message) : command.message;
        std::fputs(text.c_str(), stdout);
        std::fflush(stdout);
      } else if (!command.message.empty()) {
        print_note(command.message);
      }
      continue;
    }
    if (text->find_first_not_of(" \t\r\n") == std::string::npos) continue;
    conversation.add_user(*text);
    answer(backend, conversation, o.chat, tty);
  }
  return 0;
}

int run_remote(RunOptions& o) {
  auto chat = RemoteChat::connect(o.url, o.api_key);
  if (!chat) return say_error(chat.message());
  const std::vector<std::string>& models = (*chat)->models();
  const auto served = [&](const std::string& name) {
    return std::find(models.begin(), models.end(), name) != models.end();
  };
  // The words are [MODEL] [PROMPT], as `ollama run` takes them; one word is the model when the
  // server has a model of that name, else the prompt. -m names the model too.
  std::string prompt;
  if (!o.model_arg.empty()) {
    if (o.words.size() > 1) return fail("give the model once: -m or the first word, not both");
    o.chat.model = o.model_arg;
    if (!o.words.empty()) prompt = o.words[0];
  } else if (o.words.size() == 2 || (o.words.size() == 1 && served(o.words[0]))) {
    o.chat.model = o.words[0];
    if (o.words.size() == 2) prompt = o.words[1];
  } else if (o.words.size() == 1) {
    prompt = o.words[0];
  }
  if (o.chat.model.empty()) {
    o.chat.model = models.front();
  } else if (!served(o.chat.model)) {
    std::string list;
    for (const std::string& id : models) list += (list.empty() ? "" : ", ") + id;
    return say_error("the server at " + o.url + " has no model '" + o.chat.model + "'; it has " +
                     list);
  }
  return converse(**chat, o, prompt);
}

int run_local(RunOptions& o) {
  if (o.words.size() > 1)
    return fail(
        "one prompt at most (quote it); a model is given with -m, or with --url as the "
        "first word");
  if (!o.model_arg.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(o.model_arg, ec))
      return fail("model file " + o.model_arg + " does not exist (or is not a file)");
    o.model.model_path = o.model_arg;
  }
  if (Status s = ModelHost::check_options(o.model); !s) return fail(s.message());
  // Loading a second copy of a model a server already holds doubles its memory: say so.
  if (auto served = probe_duet_server(kDefaultServerUrl))
    print_note("duet run: duet serve is running at " + std::string(kDefaultServerUrl) + " with " +
               *served + "; `duet run --url " + kDefaultServerUrl +
               "` would use it instead of loading the model again");
  Logger log(Logger::Level::kWarn);  // load messages only when something is wrong
  if (o.model.model_path.empty())
    std::fprintf(stderr,
                 "duet run: no -m given: the built-in demo model (Qwen3 architecture, RANDOM "
                 "weights: its text is noise)\n");
  ModelHost host(o.model, log);
  if (Status s = host.load(); !s) return fail(s.message());
  LocalChat chat(host);
  return converse(chat, o, o.words.empty() ? "" : o.words[0]);
}

// Sampling flags go through set_setting, the same checks as /set in the conversation.
void add_setting_option(CLI::App* cmd, ChatSettings& s, const std::string& flag,
                        const std::string& setting, const std::string& help) {
  cmd->add_option_function<std::string>(
         flag,
         [&s, setting, flag](const std::string& v) {
           if (Status st = set_setting(s, setting, v); !st)
             throw CLI::ValidationError(flag, st.message());
         },
         help)
      ->type_name("VALUE");
}

}  // namespace

void add_run_command(CLI::App& app, Action* run, std::function<void(HostOptions&)> adjust) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run", "chat with a model in the terminal: one PROMPT, or a conversation read from stdin");
  cmd->add_option("prompt", o->words,
                  "PROMPT: answer it once and exit (default: a conversation on stdin); with "
                  "--url: [MODEL] [PROMPT] (one word is the model if the server has it)")
      ->expected(0, 2);
  cmd->add_option("-m,--model", o->model_arg,
                  "GGUF model file (default: the built-in demo model, random weights); with "
                  "--url, the server's model to use");
  cmd->add_option("--url", o->url,
                  "talk to a running server at http://HOST:PORT over its OpenAI API instead of "
                  "loading a model here");
  cmd->add_option("--api-key", o->api_key, "the server's API key (with --url)")
      ->envname("DUET_API_KEY");
  auto& s = o->chat;
  add_setting_option(cmd, s, "--think", "think",
                     "reasoning mode: on, off or auto (default: the server's, auto here)");
  add_setting_option(cmd, s, "--budget", "budget", "most reasoning tokens per reply");
  add_setting_option(cmd, s, "-n,--max-tokens", "max_tokens",
                     "most tokens per reply (default 512)");
  add_setting_option(cmd, s, "--temperature", "temperature", "sampling temperature (0–2)");
  add_setting_option(cmd, s, "--top-p", "top_p", "nucleus sampling: keep this much probability");
  add_setting_option(cmd, s, "--top-k", "top_k", "keep the K likeliest tokens (0: off)");
  add_setting_option(cmd, s, "--min-p", "min_p", "drop tokens below this share of the likeliest");
  add_setting_option(cmd, s, "--seed", "seed", "sampling seed, for replies that repeat");
  cmd->add_option("--system", s.system, "a system message at the start of the conversation");
  add_backend_option(cmd, &o->model.backend);
  cmd->add_option("-t,--threads", o->model.threads, "compute threads (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  add_capacity_options(cmd, &o->model);
  cmd->footer(
      "Lines read from stdin are the user's turns of one conversation; /bye, /exit or the end\n"
      "of input quits, and /help lists the other commands (/think, /no_think, /set, /clear,\n"
      "/save, /load, /show). A line ending in \\ goes on on the next line; \"\"\" opens and\n"
      "closes a block of lines. Ctrl-C stops the reply being written. Reasoning is dimmed on a\n"
      "terminal and set between [thinking] and [/thinking] lines otherwise; on a terminal,\n"
      "control characters in the model's text are shown escaped (^[ for ESC). Each reply's\n"
      "token count and tokens/s go to stderr. When the conversation outgrows the context, its\n"
      "oldest turns are left out (a note says how many).");
  cmd->callback([run, o, adjust] {
    if (adjust) adjust(o->model);
    *run = [o] { return o->url.empty() ? run_local(*o) : run_remote(*o); };
  });
}

}  // namespace duet::cli
