#include "cli/run/chat_session.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace duet::cli {
namespace {

std::optional<double> parse_double(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int64_t> parse_int(const std::string& text) {
  int64_t v = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, v);
  if (text.empty() || ec != std::errc() || ptr != last) return std::nullopt;
  return v;
}

// Splits off the first word (up to a space or tab) of `text`; `rest` is what follows it,
// without the blanks between.
std::string first_word(const std::string& text, std::string& rest) {
  const size_t end = text.find_first_of(" \t");
  if (end == std::string::npos) {
    rest.clear();
    return text;
  }
  const size_t next = text.find_first_not_of(" \t", end);
  rest = next == std::string::npos ? "" : text.substr(next);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.pop_back();
  return text.substr(0, end);
}

Status out_of_range(const std::string& name, const char* range) {
  return Status::error(name + " must be " + range);
}

// The sampling settings that are set, under their OpenAI names (a request body and a saved
// conversation use the same ones).
void add_sampling_fields(const ChatSettings& s, Json& out) {
  if (s.temperature) out["temperature"] = *s.temperature;
  if (s.top_p) out["top_p"] = *s.top_p;
  if (s.top_k) out["top_k"] = *s.top_k;
  if (s.min_p) out["min_p"] = *s.min_p;
  if (s.seed) out["seed"] = *s.seed;
}

const char* const kSettingNames =
    "temperature, top_p, top_k, min_p, seed, max_tokens, budget, think, system";

}  // namespace

const char* const kChatCommandsHelp =
    "Commands:\n"
    "  /think, /no_think        reason before answering from now on, or answer at once\n"
    "                           (with text after them: Qwen3's switch for that one turn)\n"
    "  /set think on|off|auto   the same, or let duet decide per turn (also /set nothink)\n"
    "  /set NAME VALUE          temperature, top_p, top_k, min_p, seed, max_tokens,\n"
    "                           budget (most reasoning tokens); /set parameter NAME VALUE too\n"
    "  /set system TEXT         the system message (/set system with no text removes it)\n"
    "  /show                    the settings now in force\n"
    "  /clear                   forget the conversation (settings and system message stay)\n"
    "  /save FILE, /load FILE   write the conversation and settings to FILE, or read them\n"
    "  /bye, /exit              quit (Ctrl-D too)\n"
    "Input: end a line with \\ to go on on the next one, or write a block between \"\"\" "
    "lines.\n"
    "Ctrl-C stops the reply being written.\n";

Status set_setting(ChatSettings& s, const std::string& raw_name, const std::string& value) {
  std::string name = raw_name;
  if (name == "num_predict") name = "max_tokens";
  if (name == "thinking_budget") name = "budget";
  if (name == "system") {
    s.system = value;
    return Status::ok();
  }
  if (name == "think") {
    if (value != "on" && value != "off" && value != "auto")
      return Status::error("think must be on, off or auto");
    s.think = value;
    return Status::ok();
  }
  if (name == "temperature" || name == "top_p" || name == "min_p") {
    const auto v = parse_double(value);
    if (!v) return Status::error(name + " must be a number, not '" + value + "'");
    if (name == "temperature") {
      if (*v < 0 || *v > 2) return out_of_range(name, "between 0 and 2");
      s.temperature = *v;
    } else if (name == "top_p") {
      if (*v <= 0 || *v > 1) return out_of_range(name, "above 0 and at most 1");
      s.top_p = *v;
    } else {
      if (*v < 0 || *v > 1) return out_of_range(name, "between 0 and 1");
      s.min_p = *v;
    }
    return Status::ok();
  }
  if (name == "top_k" || name == "seed" || name == "max_tokens" || name == "budget") {
    const auto v = parse_int(value);
    if (!v) return Status::error(name + " must be a whole number, not '" + value + "'");
    if (name == "top_k") {
      if (*v < 0) return out_of_range(name, "0 (off) or more");
      s.top_k = *v;
    } else if (name == "seed") {
      if (*v < 0) return out_of_range(name, "0 or more");
      s.seed = *v;
    } else if (name == "max_tokens") {
      if (*v < 1 || *v > (int64_t{1} << 30)) return out_of_range(name, "between 1 and 2^30");
      s.max_tokens = *v;
    } else {
      if (*v < 0 || *v > (int64_t{1} << 30)) return out_of_range(name, "between 0 and 2^30");
      s.budget = *v;
    }
    return Status::ok();
  }
  return Status::error("no setting '" + raw_name + "'; there are " + kSettingNames);
}

std::string describe_settings(const ChatSettings& s) {
  std::ostringstream out;
  const auto line = [&](const char* name, const std::string& value) {
    out << "  " << name << std::string(12 - std::string(name).size(), ' ') << value << "\n";
  };
  const auto opt_d = [](const std::optional<double>& v) {
    if (!v) return std::string("(the model's default)");
    std::ostringstream o;
    o << *v;
    return o.str();
  };
  const auto opt_i = [](const std::optional<int64_t>& v, const char* unset) {
    return v ? std::to_string(*v) : std::string(unset);
  };
  if (!s.model.empty()) line("model", s.model);
  line("think", s.think.empty() ? "(the server's default)" : s.think);
  line("budget", opt_i(s.budget, "(none)"));
  line("temperature", opt_d(s.temperature));
  line("top_p", opt_d(s.top_p));
  line("top_k", opt_i(s.top_k, "(the model's default)"));
  line("min_p", opt_d(s.min_p));
  line("seed", opt_i(s.seed, "(random)"));
  line("max_tokens", std::to_string(s.max_tokens));
  line("system", s.system.empty() ? "(none)" : s.system);
  return out.str();
}

void Conversation::add_user(const std::string& text) {
  messages_.push_back({{"role", "user"}, {"content", text}});
}

void Conversation::add_assistant(const std::string& text) {
  messages_.push_back({{"role", "assistant"}, {"content", text}});
}

void Conversation::drop_last() {
  if (!messages_.empty()) messages_.erase(messages_.end() - 1);
}

bool Conversation::drop_oldest_turn() {
  // The turn is the first user message and what follows it up to the next user message.
  size_t next_user = 1;
  while (next_user < messages_.size() && messages_[next_user]["role"] != "user") ++next_user;
  if (messages_.empty() || next_user >= messages_.size()) return false;
  messages_.erase(messages_.begin(), messages_.begin() + static_cast<std::ptrdiff_t>(next_user));
  return true;
}

Json Conversation::request_body(const ChatSettings& s) const {
  Json messages = Json::array();
  if (!s.system.empty()) messages.push_back({{"role", "system"}, {"content", s.system}});
  for (const Json& m : messages_) messages.push_back(m);
  Json body = {{"messages", std::move(messages)}, {"max_tokens", s.max_tokens}};
  if (!s.model.empty()) body["model"] = s.model;
  add_sampling_fields(s, body);
  // on/off through chat_template_kwargs, which vLLM, SGLang and llama.cpp's server read as duet
  // does; "auto" is duet's own mode field (other servers ignore it).
  if (s.think == "on" || s.think == "off")
    body["chat_template_kwargs"] = {{"enable_thinking", s.think == "on"}};
  else if (s.think == "auto")
    body["mode"] = "auto";
  if (s.budget) body["thinking_budget"] = *s.budget;
  return body;
}

Status Conversation::save(const std::string& path, const ChatSettings& s) const {
  Json settings = {{"max_tokens", s.max_tokens}};
  if (!s.think.empty()) settings["think"] = s.think;
  if (s.budget) settings["budget"] = *s.budget;
  add_sampling_fields(s, settings);
  if (!s.system.empty()) settings["system"] = s.system;
  const Json file = {{"duet_chat", 1}, {"settings", settings}, {"messages", messages_}};
  // Written beside the target and renamed over it: a failed write never leaves half a file.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::error("cannot write " + path);
    // Invalid UTF-8 a user pasted is written as U+FFFD rather than refused.
    out << file.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return Status::error("cannot write " + path);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::error("cannot write " + path);
  }
  return Status::ok();
}

Status Conversation::load(const std::string& path, ChatSettings& s) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  const Json file = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  const auto bad = [&](const std::string& why) {
    return Status::error(path + " is not a duet conversation: " + why);
  };
  if (!file.is_object() || file.value("duet_chat", Json()) != 1)
    return bad("no \"duet_chat\": 1 at the top");
  const Json* messages = find_field(file, "messages");
  if (messages == nullptr || !messages->is_array()) return bad("\"messages\" is not an array");
  for (const Json& m : *messages) {
    if (!m.is_object() || !m.contains("role") || !m.contains("content") ||
        !m["content"].is_string())
      return bad("each message needs a role and a string content");
    if (m["role"] != "user" && m["role"] != "assistant")
      return bad("a message's role is neither user nor assistant");
  }
  ChatSettings loaded = s;
  if (const Json* settings = find_field(file, "settings")) {
    if (!settings->is_object()) return bad("\"settings\" is not an object");
    for (const auto& [name, value] : settings->items()) {
      const std::string text_value = value.is_string() ? value.get<std::string>() : value.dump();
      if (Status st = set_setting(loaded, name, text_value); !st) return bad(st.message());
    }
  }
  s = loaded;
  messages_ = *messages;
  return Status::ok();
}

CommandResult run_command(const std::string& line, ChatSettings& settings,
                          Conversation& conversation) {
  using Kind = CommandResult::Kind;
  if (line.empty() || line[0] != '/') return {};
  std::string rest;
  const std::string command = first_word(line, rest);
  const auto done = [](std::string message = {}) {
    return CommandResult{Kind::kDone, std::move(message)};
  };
  const auto error = [](std::string message) {
    return CommandResult{Kind::kError, std::move(message)};
  };
  if (command == "/think" || command == "/no_think") {
    if (!rest.empty()) return {};  // a soft switch inside a prompt
    settings.think = command == "/think" ? "on" : "off";
    return done(command == "/think" ? "Thinking on: replies reason first."
                                    : "Thinking off: replies answer at once.");
  }
  if (command == "/bye" || command == "/exit") return {Kind::kQuit, {}};
  if (command == "/help" || command == "/?") return done(kChatCommandsHelp);
  if (command == "/show") return done(describe_settings(settings));
  if (command == "/clear") {
    conversation.clear();
    return done("Cleared the conversation.");
  }
  if (command == "/save" || command == "/load") {
    if (rest.empty()) return error(command + " needs a file name");
    if (command == "/save") {
      if (Status s = conversation.save(rest, settings); !s) return error(s.message());
      return done("Saved " + std::to_string(conversation.size()) + " messages to " + rest + ".");
    }
    if (Status s = conversation.load(rest, settings); !s) return error(s.message());
    return done("Loaded " + std::to_string(conversation.size()) + " messages from " + rest + ".");
  }
  if (command == "/set") {
    std::string value;
    std::string name = first_word(rest, value);
    if (name == "parameter") name = first_word(std::string(value), value);  // Ollama's spelling
    if (name.empty()) return error("/set needs a setting: " + std::string(kSettingNames));
    if (name == "think" && value.empty()) value = "on";  // Ollama's /set think
    if (name == "nothink" && value.empty()) name = "think", value = "off";
    if (value.empty() && name != "system") return error("/set " + name + " needs a value");
    if (Status s = set_setting(settings, name, value); !s) return error(s.message());
    if (name == "system")
      return done(value.empty() ? "Removed the system message." : "Set the system message.");
    return done("Set " + name + " to " + value + ".");
  }
  return error("unknown command " + command + "; /help lists them");
}

}  // namespace duet::cli
