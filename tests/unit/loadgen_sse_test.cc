// The SSE parser of `duet bench serve` over every way a stream can be cut into reads, and the
// chat-stream reader that turns events into token arrivals, usage and errors.
#include <gtest/gtest.h>

#include "loadgen/chat_stream.h"
#include "loadgen/sse_parser.h"
#include "unit/stream_splits.h"

namespace duet::loadgen {
namespace {

std::vector<std::string> parse_pieces(const test::Pieces& pieces,
                                      std::vector<std::string>* comments = nullptr) {
  std::vector<std::string> events;
  SseParser p([&](const std::string& d) { events.push_back(d); },
              [&](std::string_view c) {
                if (comments) comments->emplace_back(c);
              });
  for (std::string_view piece : pieces) EXPECT_TRUE(p.feed(piece));
  return events;
}

TEST(SseParser, SameEventsForEverySplit) {
  // LF, CRLF and lone CR line ends, a comment, a multi-line event, a field without a space,
  // an ignored event: field, and a final event with no blank line (never dispatched).
  const std::string text =
      "data: {\"a\":1}\n\n"
      ": keep-alive\r\n\r\n"
      "event: x\r\ndata: two\r\ndata:lines\r\n\r\n"
      "data: cr\r\r"
      "id: 7\ndata\n\n"
      "data: [DONE]\n\n"
      "data: unfinished";
  const std::vector<std::string> want = {"{\"a\":1}", "two\nlines", "cr", "", "[DONE]"};
  for (const test::Pieces& pieces : test::all_splits(text, 200)) {
    std::vector<std::string> comments;
    EXPECT_EQ(parse_pieces(pieces, &comments), want);
    EXPECT_EQ(comments, std::vector<std::string>{" keep-alive"});
  }
}

TEST(SseParser, ReportsAPendingEventAndOverlongLines) {
  SseParser p([](const std::string&) {});
  EXPECT_TRUE(p.feed("data: x"));
  EXPECT_TRUE(p.has_partial_event());
  EXPECT_TRUE(p.feed("\n"));
  EXPECT_TRUE(p.has_partial_event());  // data collected, blank line not yet seen
  SseParser small([](const std::string&) {}, nullptr, 8);
  EXPECT_FALSE(small.feed("data: 0123456789"));
  EXPECT_TRUE(small.failed());
  EXPECT_FALSE(small.feed("\n\n"));
}

TEST(ChatStream, TokensReasoningUsageAndDone) {
  RequestRecord r;
  ChatStreamReader c(r);
  EXPECT_TRUE(
      c.on_event(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})", 0.010));
  EXPECT_TRUE(
      c.on_event(R"({"choices":[{"delta":{"reasoning_content":"hm","reasoning":"hm"}}]})", 0.050));
  EXPECT_TRUE(c.on_event(R"({"choices":[{"delta":{"reasoning":"ok"}}]})", 0.060));
  EXPECT_TRUE(c.on_event(R"({"choices":[{"delta":{"content":"Hi"}}]})", 0.075));
  EXPECT_TRUE(c.on_event(R"({"choices":[{"delta":{},"finish_reason":"length"}]})", 0.080));
  EXPECT_TRUE(c.on_event(
      R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"completion_tokens_details":{"reasoning_tokens":3}}})",
      0.081));
  EXPECT_TRUE(c.on_event("[DONE]", 0.082));
  EXPECT_TRUE(c.done());
  EXPECT_TRUE(c.finish(0.082));
  EXPECT_TRUE(r.ok);
  ASSERT_EQ(r.tokens.size(), 3u);  // the role-only chunk and the empty final delta carry no text
  EXPECT_DOUBLE_EQ(r.tokens[0].t, 0.050);
  EXPECT_FALSE(r.tokens[0].answer);
  EXPECT_FALSE(r.tokens[1].answer);
  EXPECT_TRUE(r.tokens[2].answer);
  EXPECT_EQ(r.usage_prompt, 12);
  EXPECT_EQ(r.usage_completion, 5);
  EXPECT_EQ(r.usage_reasoning, 3);
  EXPECT_EQ(r.finish_reason, "length");
  EXPECT_DOUBLE_EQ(r.e2e, 0.082);
}

TEST(ChatStream, BrokenStreamsAreErrors) {
  {
    RequestRecord r;
    ChatStreamReader c(r);
    EXPECT_FALSE(c.on_event("{not json", 0.1));
    EXPECT_EQ(r.error_kind, "malformed_sse");
    EXPECT_FALSE(c.finish(0.2));
    EXPECT_FALSE(r.ok);
  }
  {
    RequestRecord r;
    ChatStreamReader c(r);
    EXPECT_TRUE(c.on_event(R"({"choices":[{"delta":{"content":"a"}}]})", 0.1));
    EXPECT_FALSE(c.on_event(R"({"error":{"message":"boom","code":500}})", 0.2));
    EXPECT_EQ(r.error_kind, "server_error");
    EXPECT_NE(r.error.find("boom"), std::string::npos);
  }
  {
    RequestRecord r;  // cut off: neither [DONE] nor a finish reason
    ChatStreamReader c(r);
    EXPECT_TRUE(c.on_event(R"({"choices":[{"delta":{"content":"a"}}]})", 0.1));
    EXPECT_FALSE(c.finish(0.2));
    EXPECT_EQ(r.error_kind, "incomplete_stream");
  }
  {
    RequestRecord r;  // a proper end with nothing generated (EOS at once) is not an error
    ChatStreamReader c(r);
    EXPECT_TRUE(c.on_event(R"({"choices":[{"delta":{},"finish_reason":"stop"}]})", 0.1));
    EXPECT_TRUE(c.on_event("[DONE]", 0.1));
    EXPECT_TRUE(c.finish(0.1));
    EXPECT_TRUE(r.ok);
    EXPECT_TRUE(r.tokens.empty());
  }
}

}  // namespace
}  // namespace duet::loadgen
