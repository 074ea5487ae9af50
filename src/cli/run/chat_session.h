// The state of a `duet run` conversation and the commands that change it. Pure logic, no I/O
// but /save and /load: the in-process and the HTTP paths both send `request_body()`, an OpenAI
// chat body, so the two behave alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "api/json_util.h"
#include "base/status.h"

namespace duet::cli {

// What each request asks for. Unset sampling fields get the server's (the mode's) defaults.
struct ChatSettings {
  std::optional<double> temperature, top_p, min_p;
  std::optional<int64_t> top_k, seed;
  int64_t max_tokens = 512;
  std::string think;              // "on", "off", "auto", or "" for the server's default
  std::optional<int64_t> budget;  // most reasoning tokens per reply
  std::string system;             // a system message before the turns ("" for none)
  std::string model;              // the model to name in requests ("" for the server's only one)
};

// Sets one setting from the text a user typed (`/set NAME VALUE`, or a flag): NAME is
// temperature, top_p, top_k, min_p, seed, max_tokens (Ollama's num_predict), budget (or
// thinking_budget), think. A bad name or value is an error that says what is allowed.
Status set_setting(ChatSettings& s, const std::string& name, const std::string& value);
// The settings as lines for /show.
std::string describe_settings(const ChatSettings& s);

// The user and assistant turns so far. An assistant turn keeps only the answer: reasoning from
// earlier turns is not sent again (Qwen3's chat template drops it too).
class Conversation {
 public:
  const Json& messages() const { return messages_; }
  void add_user(const std::string& text);
  void add_assistant(const std::string& text);
  void drop_last();  // the user turn a refused request added
  // Drops the oldest user turn and the replies after it; false (nothing dropped) when the
  // newest user turn is all that is left.
  bool drop_oldest_turn();
  void clear() { messages_ = Json::array(); }
  size_t size() const { return messages_.size(); }

  // An OpenAI chat body: the system message, the turns, and every setting that is set.
  Json request_body(const ChatSettings& s) const;

  // A conversation file: {"duet_chat": 1, "settings": {…}, "messages": […]}. Load replaces
  // the turns and the settings it names; a file that is not one says why and changes nothing.
  Status save(const std::string& path, const ChatSettings& s) const;
  Status load(const std::string& path, ChatSettings& s);

 private:
  Json messages_ = Json::array();
};

// A line typed at the prompt that starts with '/'. Kinds:
//   kNotCommand  send it as a prompt (no '/', or /think or /no_think followed by text: Qwen3's
//                soft switch for that one turn)
//   kDone        handled; `message` (if any) is for the user
//   kQuit        /bye or /exit
//   kError       `message` says what was wrong
struct CommandResult {
  enum class Kind { kNotCommand, kDone, kQuit, kError };
  Kind kind = Kind::kNotCommand;
  std::string message;
};
CommandResult run_command(const std::string& line, ChatSettings& settings,
                          Conversation& conversation);

// The text /help prints.
extern const char* const kChatCommandsHelp;

}  // namespace duet::cli
