// duet run's conversation and commands (cli/run/chat_session.h) and its multi-line input
// (cli/run/line_input.h): what each /command does and refuses, the request body each setting
// makes, dropping the oldest turns, and /save and /load.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/run/chat_session.h"
#include "cli/run/line_input.h"

namespace duet::cli {
namespace {

using Kind = CommandResult::Kind;

TEST(ChatSession, SettingsBecomeRequestFields) {
  ChatSettings s;
  Conversation c;
  c.add_user("hi");
  Json body = c.request_body(s);
  EXPECT_EQ(body.dump(), R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":512})");
  ASSERT_TRUE(set_setting(s, "temperature", "0.3"));
  ASSERT_TRUE(set_setting(s, "top_p", "0.9"));
  ASSERT_TRUE(set_setting(s, "top_k", "20"));
  ASSERT_TRUE(set_setting(s, "min_p", "0"));
  ASSERT_TRUE(set_setting(s, "seed", "42"));
  ASSERT_TRUE(set_setting(s, "num_predict", "64"));  // Ollama's name for max_tokens
  ASSERT_TRUE(set_setting(s, "thinking_budget", "100"));
  ASSERT_TRUE(set_setting(s, "think", "off"));
  ASSERT_TRUE(set_setting(s, "system", "be brief"));
  s.model = "qwen3:14b";
  body = c.request_body(s);
  EXPECT_EQ(body["messages"][0], (Json{{"role", "system"}, {"content", "be brief"}}));
  EXPECT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["max_tokens"], 64);
  EXPECT_EQ(body["model"], "qwen3:14b");
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(body["top_p"].get<double>(), 0.9);
  EXPECT_EQ(body["top_k"], 20);
  EXPECT_DOUBLE_EQ(body["min_p"].get<double>(), 0.0);
  EXPECT_EQ(body["seed"], 42);
  EXPECT_EQ(body["thinking_budget"], 100);
  EXPECT_EQ(body["chat_template_kwargs"], (Json{{"enable_thinking", false}}));
  ASSERT_TRUE(set_setting(s, "think", "on"));
  EXPECT_EQ(c.request_body(s)["chat_template_kwargs"], (Json{{"enable_thinking", true}}));
  ASSERT_TRUE(set_setting(s, "think", "auto"));
  body = c.request_body(s);
  EXPECT_FALSE(body.contains("chat_template_kwargs"));
  EXPECT_EQ(body["mode"], "auto");
}

TEST(ChatSession, BadSettingsSayWhatIsAllowed) {
  ChatSettings s;
  const auto refused = [&](const char* name, const char* value, const char* words) {
    const Status st = set_setting(s, name, value);
    EXPECT_FALSE(st) << name << "=" << value;
    EXPECT_NE(st.message().find(words), std::string::npos) << st.message();
  };
  refused("temperature", "hot", "must be a number");
  refused("temperature", "2.5", "between 0 and 2");
  refused("temperature", "nan", "must be a number");
  refused("top_p", "0", "above 0");
  refused("min_p", "1.5", "between 0 and 1");
  refused("top_k", "-1", "0 (off) or more");
  refused("top_k", "3.5", "whole number");
  refused("seed", "-2", "0 or more");
  refused("max_tokens", "0", "between 1");
  refused("max_tokens", "99999999999999999999", "whole number");
  refused("budget", "-5", "between 0");
  refused("think", "maybe", "on, off or auto");
  refused("colour", "red", "no setting 'colour'");
  // Nothing refused changed anything.
  EXPECT_FALSE(s.temperature || s.top_p || s.min_p || s.top_k || s.seed || s.budget);
  EXPECT_EQ(s.max_tokens, 512);
  EXPECT_EQ(s.think, "");
}

TEST(ChatSession, Commands) {
  ChatSettings s;
  Conversation c;
  c.add_user("q");
  c.add_assistant("a");
  EXPECT_EQ(run_command("hello", s, c).kind, Kind::kNotCommand);
  EXPECT_EQ(run_command("", s, c).kind, Kind::kNotCommand);
  // /think alone switches the mode from now on; with text it is a prompt (Qwen3's soft switch).
  EXPECT_EQ(run_command("/think", s, c).kind, Kind::kDone);
  EXPECT_EQ(s.think, "on");
  EXPECT_EQ(run_command("/no_think", s, c).kind, Kind::kDone);
  EXPECT_EQ(s.think, "off");
  EXPECT_EQ(run_command("/think why is the sky blue", s, c).kind, Kind::kNotCommand);
  EXPECT_EQ(s.think, "off");
  // Ollama's spellings.
  EXPECT_EQ(run_command("/set think", s, c).kind, Kind::kDone);
  EXPECT_EQ(s.think, "on");
  EXPECT_EQ(run_command("/set nothink", s, c).kind, Kind::kDone);
  EXPECT_EQ(s.think, "off");
  EXPECT_EQ(run_command("/set think auto", s, c).kind, Kind::kDone);
  EXPECT_EQ(s.think, "auto");
  EXPECT_EQ(run_command("/set parameter temperature 0.7", s, c).kind, Kind::kDone);
  EXPECT_DOUBLE_EQ(*s.temperature, 0.7);
  EXPECT_EQ(run_command("/set   top_k   5  ", s, c).kind, Kind::kDone);
  EXPECT_EQ(*s.top_k, 5);
  EXPECT_EQ(run_command("/set system You are terse.  Very.", s, c).kind, Kind::kDone);
  EXPECT_EQ(s.system, "You are terse.  Very.");
  EXPECT_EQ(run_command("/set system", s, c).kind, Kind::kDone);
  EXPECT_EQ(s.system, "");
  const CommandResult show = run_command("/show", s, c);
  EXPECT_NE(show.message.find("temperature 0.7"), std::string::npos) << show.message;
  EXPECT_NE(run_command("/help", s, c).message.find("/save FILE"), std::string::npos);
  EXPECT_EQ(run_command("/?", s, c).kind, Kind::kDone);
  // Mistakes: an error that says what was wrong, and nothing changed.
  const CommandResult bad = run_command("/set temperature 9", s, c);
  EXPECT_EQ(bad.kind, Kind::kError);
  EXPECT_NE(bad.message.find("between 0 and 2"), std::string::npos);
  EXPECT_DOUBLE_EQ(*s.temperature, 0.7);
  EXPECT_EQ(run_command("/set temperature", s, c).kind, Kind::kError);
  EXPECT_EQ(run_command("/set", s, c).kind, Kind::kError);
  EXPECT_EQ(run_command("/save", s, c).kind, Kind::kError);
  const CommandResult unknown = run_command("/usr/bin/env", s, c);
  EXPECT_EQ(unknown.kind, Kind::kError);
  EXPECT_NE(unknown.message.find("/help"), std::string::npos);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(run_command("/clear", s, c).kind, Kind::kDone);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(run_command("/bye", s, c).kind, Kind::kQuit);
  EXPECT_EQ(run_command("/exit", s, c).kind, Kind::kQuit);
}

TEST(ChatSession, DropsTheOldestTurnsButNeverTheNewest) {
  Conversation c;
  EXPECT_FALSE(c.drop_oldest_turn());
  c.add_user("1");
  c.add_assistant("a1");
  c.add_user("2");
  c.add_assistant("a2");
  c.add_user("3");
  ASSERT_TRUE(c.drop_oldest_turn());
  EXPECT_EQ(c.messages()[0]["content"], "2");
  EXPECT_EQ(c.size(), 3u);
  ASSERT_TRUE(c.drop_oldest_turn());
  EXPECT_EQ(c.size(), 1u);
  EXPECT_EQ(c.messages()[0]["content"], "3");
  EXPECT_FALSE(c.drop_oldest_turn());
  EXPECT_EQ(c.size(), 1u);
  // The system message is a setting, not a turn: it is in every body whatever was dropped.
  ChatSettings s;
  s.system = "sys";
  EXPECT_EQ(c.request_body(s)["messages"][0]["content"], "sys");
}

class ChatFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("duet_chat_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  void write(const char* name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
  }
  std::filesystem::path dir_;
};

TEST_F(ChatFiles, SaveAndLoadRoundTrip) {
  ChatSettings s;
  ASSERT_TRUE(set_setting(s, "temperature", "0.25"));
  ASSERT_TRUE(set_setting(s, "think", "on"));
  ASSERT_TRUE(set_setting(s, "budget", "64"));
  s.system = "sys";
  Conversation c;
  c.add_user("line one\nline two");
  c.add_assistant("answer \xff");  // invalid UTF-8 is written as U+FFFD, not refused
  ASSERT_TRUE(c.save(path("chat.json"), s));
  ChatSettings loaded;
  Conversation back;
  ASSERT_TRUE(back.load(path("chat.json"), loaded));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back.messages()[0]["content"], "line one\nline two");
  EXPECT_EQ(back.messages()[1]["content"], "answer \xef\xbf\xbd");
  EXPECT_DOUBLE_EQ(*loaded.temperature, 0.25);
  EXPECT_EQ(loaded.think, "on");
  EXPECT_EQ(*loaded.budget, 64);
  EXPECT_EQ(loaded.system, "sys");
  EXPECT_FALSE(std::filesystem::exists(path("chat.json.tmp")));
}

TEST_F(ChatFiles, LoadRefusesWhatIsNotAConversationAndChangesNothing) {
  ChatSettings s;
  s.max_tokens = 7;
  Conversation c;
  c.add_user("kept");
  const auto refused = [&](const char* name, const std::string& text, const char* words) {
    write(name, text);
    const Status st = c.load(path(name), s);
    EXPECT_FALSE(st) << name;
    EXPECT_NE(st.message().find(words), std::string::npos) << st.message();
    EXPECT_EQ(c.size(), 1u);
    EXPECT_EQ(s.max_tokens, 7);
  };
  refused("empty.json", "", "duet_chat");
  refused("garbage.json", "\x01\x02not json", "duet_chat");
  refused("other.json", R"({"messages": []})", "duet_chat");
  refused("no_messages.json", R"({"duet_chat": 1})", "messages");
  refused("bad_role.json", R"({"duet_chat": 1, "messages": [{"role": "tool", "content": "x"}]})",
          "role");
  refused("bad_content.json", R"({"duet_chat": 1, "messages": [{"role": "user", "content": 5}]})",
          "content");
  refused("bad_setting.json", R"({"duet_chat": 1, "settings": {"max_tokens": 0}, "messages": []})",
          "max_tokens");
  const Status missing = c.load(path("nowhere.json"), s);
  EXPECT_FALSE(missing);
  EXPECT_NE(missing.message().find("cannot read"), std::string::npos);
  EXPECT_FALSE(c.save((dir_ / "no_dir" / "x.json").string(), s));
}

std::vector<std::string> join_all(const std::vector<std::string>& lines) {
  MultiLineJoiner j;
  std::vector<std::string> out;
  for (const std::string& line : lines)
    if (auto input = j.feed(line)) out.push_back(*input);
  if (auto rest = j.finish()) out.push_back(*rest);
  return out;
}

TEST(MultiLineInput, BackslashAndTripleQuotes) {
  using V = std::vector<std::string>;
  EXPECT_EQ(join_all({"one", "two"}), (V{"one", "two"}));
  EXPECT_EQ(join_all({"first \\", "second\\", "third", "next"}),
            (V{"first \nsecond\nthird", "next"}));
  EXPECT_EQ(join_all({R"(""")", "a", "  b\\", "", R"(c""")", "after"}),
            (V{"a\n  b\\\n\nc", "after"}));
  EXPECT_EQ(join_all({R"("""start)", R"(end""")"}), (V{"start\nend"}));
  EXPECT_EQ(join_all({R"(""")", "a", "", "b", R"(""")"}), (V{"a\n\nb"}));
  EXPECT_EQ(join_all({R"(""")", R"(""")"}), (V{""}));
  EXPECT_EQ(join_all({R"("""one line""")"}), (V{"one line"}));
  EXPECT_EQ(join_all({"crlf\r", "x"}), (V{"crlf", "x"}));
  // Quotes that do not open a line are text.
  EXPECT_EQ(join_all({R"(say """hi""")"}), (V{R"(say """hi""")"}));
  // The end of input sends what an unfinished block holds.
  EXPECT_EQ(join_all({R"(""")", "unfinished"}), (V{"unfinished"}));
  EXPECT_EQ(join_all({"dangling\\"}), (V{"dangling"}));
}

}  // namespace
}  // namespace duet::cli
