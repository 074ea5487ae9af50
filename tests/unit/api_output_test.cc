// The API layer's output side: engine events → OutputDelta (decoder, reasoning splitter,
// tool-call parser, stop strings) → the dialects' JSON, fed token by token as the engine
// would, with Qwen3's real tokenizer.
#include <gtest/gtest.h>

#include "api/output_pipeline.h"
#include "api/response_format.h"
#include "tokenizer_test_support.h"

namespace duet {
namespace {

struct Collected {
  std::string reasoning, content;
  std::vector<ToolCallDelta> tool_deltas;
  std::vector<ParsedToolCall> calls;
  int deltas_with_output = 0;
  int tokens = 0;
};

// Feeds `text` as the model would produce it: one event per token (added tokens such as
// <think> as themselves; `as_client_text`: spelled in ordinary tokens).
Collected run(const Tokenizer& tok, std::string_view text, OutputOptions options,
              OutputPipeline** keep = nullptr, bool as_client_text = false) {
  static std::unique_ptr<OutputPipeline> last;
  last = std::make_unique<OutputPipeline>(tok, std::move(options));
  Collected c;
  auto take = [&](const OutputDelta& d) {
    c.reasoning += d.reasoning;
    c.content += d.content;
    c.tool_deltas.insert(c.tool_deltas.end(), d.tool_calls.begin(), d.tool_calls.end());
    c.calls.insert(c.calls.end(), d.finished_calls.begin(), d.finished_calls.end());
    c.deltas_with_output += d.has_output();
    c.tokens += d.tokens;
  };
  for (int32_t id : as_client_text ? tok.encode_user(text) : tok.encode_template(text)) {
    TokenEvent ev;
    ev.tokens = {id};
    take(last->push(ev));
  }
  take(last->finish());
  if (keep) *keep = last.get();
  return c;
}

class OutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tok_ = test::qwen3_tokenizer();
    ASSERT_NE(tok_, nullptr);
  }
  const Tokenizer* tok_ = nullptr;
};

TEST_F(OutputTest, ReasoningThenContent) {
  OutputOptions o;
  o.thinking = true;
  Collected c = run(*tok_, "<think>\nLet me add: 2+2=4.\n</think>\n\nThe answer is 4.", o);
  EXPECT_EQ(c.reasoning, "Let me add: 2+2=4.");
  EXPECT_EQ(c.content, "The answer is 4.");
  EXPECT_EQ(c.tokens,
            static_cast<int>(
                tok_->encode_template("<think>\nLet me add: 2+2=4.\n</think>\n\nThe answer is 4.")
                    .size()));
}

// Where the think block is comes from the token ids (engine/reasoning_tracker.h), as the
// engine reads it: <think> after leading whitespace opens it; the same characters spelled in
// ordinary tokens are the answer's text, and the engine counts no reasoning for them either.
TEST_F(OutputTest, ThinkBlockIsReadFromTokens) {
  OutputOptions o;
  o.thinking = true;
  Collected c = run(*tok_, "\n<think>\nhmm\n</think>\n\nok", o);
  EXPECT_EQ(c.reasoning, "hmm");
  EXPECT_EQ(c.content, "ok");
  c = run(*tok_, "<think>\nhmm\n</think>\n\nok", o, nullptr, /*as_client_text=*/true);
  EXPECT_EQ(c.reasoning, "");
  EXPECT_EQ(c.content, "<think>\nhmm\n</think>\n\nok");
  // The ids the server shares with the engine.
  const auto ids = reasoning_token_ids(*tok_);
  EXPECT_EQ(ids->think_open, 151667);
  EXPECT_EQ(ids->think_close, 151668);
  EXPECT_TRUE(ids->is_whitespace(tok_->encode_template("\n\n").front()));
  EXPECT_FALSE(ids->is_whitespace(tok_->encode_template("a").front()));
}

TEST_F(OutputTest, PrefilledThinkBlockStartsAsReasoning) {
  OutputOptions o;
  o.thinking = true;
  o.prompt_opened_think = true;
  Collected c = run(*tok_, "hmm, 4.\n</think>\n\n4", o);
  EXPECT_EQ(c.reasoning, "hmm, 4.");
  EXPECT_EQ(c.content, "4");
}

TEST_F(OutputTest, RawAndDroppedReasoning) {
  OutputOptions raw;
  raw.thinking = true;
  raw.reasoning = ReasoningOutput::kRaw;
  Collected r = run(*tok_, "<think>\nx\n</think>\n\ny", raw);
  EXPECT_EQ(r.reasoning, "");
  EXPECT_EQ(r.content, "<think>\nx\n</think>\n\ny");
  OutputOptions drop;
  drop.thinking = true;
  drop.reasoning = ReasoningOutput::kDrop;
  Collected d = run(*tok_, "<think>\nx\n</think>\n\ny", drop);
  EXPECT_EQ(d.reasoning, "");
  EXPECT_EQ(d.content, "y");
}

TEST_F(OutputTest, ToolCallsStreamAsTheyAreWritten) {
  OutputOptions o;
  o.parse_tool_calls = true;
  o.tool_id_seed = 42;
  const std::string text =
      "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
      "</tool_call>\n<tool_call>\n{\"name\": \"now\"}\n</tool_call>";
  Collected c = run(*tok_, text, o);
  EXPECT_EQ(c.content, "Checking.\n\n");  // the newline between the blocks is text
  ASSERT_EQ(c.calls.size(), 2u);
  EXPECT_EQ(c.calls[0].name, "get_weather");
  EXPECT_EQ(c.calls[0].arguments_string, "{\"city\": \"Paris\"}");
  EXPECT_EQ(c.calls[1].name, "now");
  EXPECT_EQ(c.calls[1].arguments_string, "{}");
  // Streaming: a begin delta with id and name, then argument fragments that add up.
  std::string args0;
  int begins = 0;
  for (const ToolCallDelta& d : c.tool_deltas) {
    if (d.begin) {
      ++begins;
      EXPECT_EQ(d.id, c.calls[d.index].id);
      EXPECT_EQ(d.name, c.calls[d.index].name);
    }
    if (d.index == 0) args0 += d.arguments;
  }
  EXPECT_EQ(begins, 2);
  EXPECT_EQ(args0, "{\"city\": \"Paris\"}");
  EXPECT_TRUE(c.calls[0].id.starts_with("call_"));
}

TEST_F(OutputTest, StopStringsCutTheAnswerOnly) {
  OutputOptions o;
  o.thinking = true;
  o.stop = {"STOP"};
  OutputPipeline* p = nullptr;
  Collected c = run(*tok_, "<think>\nno STOP here\n</think>\n\nabc STOP def", o, &p);
  EXPECT_EQ(c.reasoning, "no STOP here");  // stop strings apply to the answer
  EXPECT_EQ(c.content, "abc ");
  EXPECT_TRUE(p->stopped());
}

TEST_F(OutputTest, SplitCharactersWaitForTheirLastByte) {
  // "🦜" (F0 9F A6 9C) fed as its four single-byte tokens: nothing until the last byte.
  OutputPipeline p(*tok_, OutputOptions{});
  const std::string parrot = "\xF0\x9F\xA6\x9C";
  for (size_t i = 0; i < parrot.size(); ++i) {
    const auto id = tok_->find_token(parrot.substr(i, 1));
    ASSERT_TRUE(id.has_value());
    TokenEvent ev;
    ev.tokens = {*id};
    EXPECT_EQ(p.push(ev).content, i + 1 < parrot.size() ? "" : parrot) << i;
  }
  // A stray continuation byte becomes U+FFFD, never invalid UTF-8.
  TokenEvent stray;
  stray.tokens = {*tok_->find_token("\x9F")};
  EXPECT_EQ(p.push(stray).content, "\xEF\xBF\xBD");
}

TEST_F(OutputTest, OpenAIChunksAndFinalResponse) {
  FormatterConfig fc;
  fc.model = "m";
  fc.id = "chatcmpl-x";
  fc.created = 1;
  fc.include_usage = true;
  auto f = make_formatter(fc);
  OutputDelta d;
  d.reasoning = "r";
  d.content = "c";
  d.tool_calls.push_back(
      {.index = 0, .begin = true, .id = "call_1", .name = "f", .arguments = "{"});
  const std::string chunk = f->stream_delta(d, nullptr);
  ASSERT_TRUE(chunk.starts_with("data: ") && chunk.ends_with("\n\n"));
  auto j = nlohmann::json::parse(chunk.substr(6));
  EXPECT_EQ(j["object"], "chat.completion.chunk");
  EXPECT_EQ(j["choices"][0]["delta"]["reasoning_content"], "r");
  EXPECT_EQ(j["choices"][0]["delta"]["reasoning"], "r");
  EXPECT_EQ(j["choices"][0]["delta"]["content"], "c");
  EXPECT_EQ(j["choices"][0]["delta"]["tool_calls"][0]["function"]["name"], "f");
  EXPECT_TRUE(j["choices"][0]["finish_reason"].is_null());
  EXPECT_EQ(f->stream_delta(OutputDelta{}, nullptr), "");  // nothing to show: nothing sent

  FinishInfo fin;
  fin.reason = "tool_calls";
  fin.usage = {10, 5, 4, 2};
  fin.mode = {.enabled = true,
              .source = ThinkingSource::kAuto,
              .reason = "auto: math",
              .budget = {},
              .hard_disabled = false};
  const std::string end = f->stream_end(fin);
  EXPECT_TRUE(end.ends_with("data: [DONE]\n\n"));
  const size_t second = end.find("data: ", 6);
  auto last = nlohmann::json::parse(end.substr(6, second - 6));
  EXPECT_EQ(last["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(last["duet"]["mode_source"], "auto");
  auto usage = nlohmann::json::parse(end.substr(second + 6, end.find("\n\n", second) - second - 6));
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["total_tokens"], 15);
  EXPECT_EQ(usage["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
  EXPECT_EQ(usage["usage"]["completion_tokens_details"]["reasoning_tokens"], 2);

  OutputDelta call;
  ParsedToolCall pc;
  pc.id = "call_1";
  pc.name = "f";
  pc.arguments = nlohmann::json::object();
  pc.arguments_string = "{}";
  call.finished_calls.push_back(pc);
  f->accumulate(call);
  auto full = nlohmann::json::parse(f->full_response(fin));
  EXPECT_EQ(full["object"], "chat.completion");
  EXPECT_TRUE(full["choices"][0]["message"]["content"].is_null());  // only tool calls
  EXPECT_EQ(full["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"], "{}");
  EXPECT_EQ(full["choices"][0]["message"]["tool_calls"][0]["type"], "function");
}

TEST_F(OutputTest, OllamaLines) {
  FormatterConfig fc;
  fc.dialect = Dialect::kOllama;
  fc.model = "m";
  auto f = make_formatter(fc);
  OutputDelta d;
  d.reasoning = "t";
  const std::string line = f->stream_delta(d, nullptr);
  ASSERT_TRUE(line.ends_with("\n"));
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // one line
  auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["message"]["thinking"], "t");
  EXPECT_EQ(j["message"]["content"], "");
  EXPECT_EQ(j["done"], false);
  FinishInfo fin;
  fin.reason = "length";
  fin.usage = {3, 2, 0, 0};
  fin.timings = {1000, 0, 400, 500};
  auto end = nlohmann::json::parse(f->stream_end(fin));
  EXPECT_EQ(end["done"], true);
  EXPECT_EQ(end["done_reason"], "length");
  EXPECT_EQ(end["prompt_eval_count"], 3);
  EXPECT_EQ(end["eval_count"], 2);
  EXPECT_EQ(end["total_duration"], 1000);
  EXPECT_EQ(end["eval_duration"], 500);
}

}  // namespace
}  // namespace duet
