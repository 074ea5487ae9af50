// Provenance over the golden chat-template cases: render_marked gives exactly the text
// Hugging Face renders, and — where the client's data spells no added token — tokenizing
// it with provenance (encode_marked) gives exactly the ids Hugging Face's tokenizer gives
// for the rendered string (encode_template, itself held to Hugging Face by
// tokenizer_golden_test). Where the client's data does spell one, it stays text.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/chat_template_cases.h"
#include "text/template/chat_template.h"
#include "unit/tokenizer_test_support.h"

namespace duet {
namespace {

using ojson = nlohmann::ordered_json;

ojson read_ordered(const std::string& path) { return test::read_ordered_json(path); }

std::vector<std::string> added_spellings(const Tokenizer& t) {
  std::vector<std::string> out;
  for (int32_t id = 0; id < t.n_vocab(); ++id)
    if (t.is_added(id)) out.emplace_back(t.token_text(id));
  return out;
}

size_t count_added(const Tokenizer& t, const std::vector<int32_t>& ids) {
  return static_cast<size_t>(
      std::count_if(ids.begin(), ids.end(), [&](int32_t id) { return t.is_added(id); }));
}

struct Tally {
  size_t cases = 0, parity = 0, client_spelled = 0;
};

// One case: the marked text is the golden text; the ids follow the rules above.
void check_case(const ChatTemplate& tmpl, const Tokenizer& tok, const ojson& messages,
                const ojson& tools, const ChatTemplateOptions& opt, const std::string& want,
                const std::string& name, Tally& tally) {
  auto marked = tmpl.render_marked(messages, tools, opt);
  ASSERT_TRUE(marked.is_ok()) << name << ": " << marked.message();
  EXPECT_EQ(marked->text, want) << name;
  EXPECT_EQ(marked->text, tmpl.render(messages, tools, opt).value()) << name;
  EXPECT_TRUE(well_formed(marked->trusted, marked->text.size())) << name;
  ++tally.cases;
  const std::string client = messages.dump() + (tools.is_null() ? "" : tools.dump());
  static const std::vector<std::string> spellings = added_spellings(tok);
  const bool spelled = std::any_of(spellings.begin(), spellings.end(), [&](const std::string& s) {
    return client.find(s) != std::string::npos;
  });
  const std::vector<int32_t> ids = tok.encode_marked(marked->text, marked->trusted);
  const std::vector<int32_t> hf = tok.encode_template(marked->text);
  if (!spelled) {
    EXPECT_EQ(ids, hf) << name;
    tally.parity += ids == hf;
    return;
  }
  // The client's spellings are text (the template may also have dropped them): never more
  // added ids than a plain encode, and the same bytes.
  tally.client_spelled += ids != hf;
  EXPECT_LE(count_added(tok, ids), count_added(tok, hf)) << name;
  EXPECT_EQ(ids != hf, count_added(tok, ids) < count_added(tok, hf)) << name;
  EXPECT_EQ(tok.decode(ids).value(), test::nfc(marked->text)) << name;
}

TEST(ChatTemplateProvenanceGolden, Qwen3Cases) {
  const Tokenizer* tok = test::qwen3_tokenizer();
  ASSERT_NE(tok, nullptr);
  const ojson cases = read_ordered(test::golden_dir() + "/chat_template_cases.json");
  ASSERT_TRUE(cases.is_array() && !cases.empty());
  auto t = ChatTemplate::create(builtin_qwen3_template());
  ASSERT_TRUE(t.is_ok()) << t.message();
  Tally tally;
  for (const ojson& c : cases) {
    const ojson& kw = c["kwargs"];
    const ChatTemplateOptions opt = test::qwen3_case_options(kw);
    const ojson tools = kw.contains("tools") ? kw["tools"] : ojson();
    check_case(*t, *tok, c["messages"], tools, opt, c["rendered"].get<std::string>(),
               c["name"].get<std::string>(), tally);
  }
  EXPECT_EQ(tally.cases, cases.size());
  EXPECT_GT(tally.parity, tally.cases / 2);  // most cases hold no client spelling
  std::printf(
      "chat_template_cases.json: %zu cases, %zu tokenized as Hugging Face does, %zu with "
      "added-token spellings in client data kept as text\n",
      tally.cases, tally.parity, tally.client_spelled);
}

TEST(ChatTemplateProvenanceGolden, OtherModelsTemplates) {
  const Tokenizer* tok = test::qwen3_tokenizer();
  ASSERT_NE(tok, nullptr);
  const std::string dir = test::golden_dir() + "/templates";
  const ojson cases = read_ordered(dir + "/template_cases.json");
  ASSERT_TRUE(cases.is_array() && !cases.empty());
  Tally tally;
  for (const ojson& c : cases) {
    const std::string name =
        c["template"].get<std::string>() + " / " + c["name"].get<std::string>();
    auto t =
        ChatTemplate::create(test::read_text_file(dir + "/" + c["template"].get<std::string>()));
    ASSERT_TRUE(t.is_ok()) << name << ": " << t.message();
    const ChatTemplateOptions opt = test::other_model_case_options();
    check_case(*t, *tok, c["messages"], c["tools"], opt, c["rendered"].get<std::string>(), name,
               tally);
  }
  EXPECT_EQ(tally.cases, cases.size());
  std::printf(
      "templates/template_cases.json: %zu cases, %zu tokenized as Hugging Face does, %zu "
      "with added-token spellings in client data kept as text\n",
      tally.cases, tally.parity, tally.client_spelled);
}

}  // namespace
}  // namespace duet
