// Provenance through the template engine (Template::render_marked): which bytes of the
// output the template wrote (trusted) and which came from the client. Each row's `want`
// shows the output with every trusted run in «»; the rest is client text. The client's `x`
// is "X" unless the row's context says otherwise.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "text/template/jinja/jinja.h"
#include "text/tokenizer/marked_text.h"

namespace duet::jinja {
namespace {

using ojson = nlohmann::ordered_json;

std::string show(const MarkedText& m) {
  std::string out;
  size_t at = 0;
  for (const TextSpan& s : m.trusted) {
    out += m.text.substr(at, s.begin - at) + "«" + m.text.substr(s.begin, s.end - s.begin) + "»";
    at = s.end;
  }
  return out + m.text.substr(at);
}

struct Row {
  const char* name;
  const char* source;
  const char* want;
  const char* client = R"({"x": "X"})";
  const char* trusted = "{}";
};

const Row kRows[] = {
    {"template_text", "<a>{{ x }}<b>", "«<a>»X«<b>»"},
    {"literal", "{{ '<a>' }}{{ x }}", "«<a>»X"},
    {"plus", "{{ '<a>' + x + '<b>' }}", "«<a>»X«<b>»"},
    {"tilde_with_a_number", "{{ '<a>' ~ 1 ~ x }}", "«<a>»1X"},
    {"client_spelling_stays_client", "{{ x }}", "<a>", R"({"x": "<a>"})"},
    {"set_block", "{% set s %}<t>{{ x }}{% endset %}[{{ s }}]", "«[<t>»X«]»"},
    {"set_expression", "{% set s = x + '<t>' %}{{ s }}", "X«<t>»"},
    {"macro", "{% macro m(v) %}<m>{{ v }}</m>{% endmacro %}{{ m(x) }}", "«<m>»X«</m>»"},
    {"strip", "{{ ('  <t>' + x + ' ').strip() }}", "«<t>»X"},
    {"lstrip_rstrip_chars", "{{ ('\\n<t>' + x).lstrip('\\n') }}|{{ (x + '<t>\\n').rstrip('\\n') }}",
     "«<t>»X«|»X«<t>»"},
    {"trim_filter", "{{ (' <t>' + x) | trim }}", "«<t>»X"},
    {"split", "{{ ('<a>|' + x).split('|')[0] }}.{{ ('<a>|' + x).split('|')[-1] }}", "«<a>.»X"},
    {"split_whitespace", "{{ ('<a> ' + x).split()[0] }}{{ ('<a> ' + x).split()[1] }}", "«<a>»X"},
    {"index", "{{ ('<a>' + x)[0] }}{{ ('<a>' + x)[3] }}", "«<»X"},
    {"slice", "{{ ('<a>' + x)[1:] }}|{{ ('<a>' + x)[::-1] }}", "«a>»X«|»X«>a<»"},
    {"replace_inserts_trusted_text",
     "{{ ('<a>' + x).replace('a', x) }}|{{ x.replace('X', '<q>') }}", "«<»X«>»X«|<q>»"},
    {"replace_removal_keeps_client_bytes_client", "{{ x.replace('YY', '') }}", "<|im_end|>",
     R"({"x": "<|im_YYend|>"})"},
    {"join_filter", "{{ ['<a>', x] | join('|') }}", "«<a>|»X"},
    {"join_method", "{{ '|'.join([x, '<b>']) }}", "X«|<b>»"},
    {"upper_lower", "{{ ('<a>' + x).upper() }}{{ ('<B>' + x).lower() }}", "«<A>»X«<b>»x"},
    {"string_filter", "{{ ('<a>' + x) | string }}", "«<a>»X"},
    {"iterating_characters", "{% for c in '<a' + x %}{{ c }}{% endfor %}", "«<a»X"},
    {"first_last_reverse", "{{ ('<' + x) | first }}{{ ('<' + x) | last }}{{ ('<' + x) | reverse }}",
     "«<»XX«<»"},
    {"default", "{{ y | default('<d>') }}{{ x | default('<d>') }}", "«<d>»X"},
    {"tojson_is_client_text", "{{ '<a>' | tojson }}", "\"<a>\""},
    {"indent_is_client_text", "{{ '<a>\n<b>' | indent(2) }}", "<a>\n  <b>"},
    {"escape_is_client_text", "{{ '<a>' | e }}", "&lt;a&gt;"},
    {"numbers_are_client_text", "{{ 5 }}{{ 1.5 }}{{ true }}", "51.5true"},
    {"dict_keys_are_client_text", "{% for k in {'<k>': 1} %}{{ k }}{% endfor %}", "<k>"},
    {"containers_printed_are_client_text", "{{ ['<a>'] }}", "[\"<a>\"]"},
    {"trusted_context", "{{ bos }}{{ x }}", "«<s>»X", R"({"x": "X"})", R"({"bos": "<s>"})"},
    {"trusted_context_nested", "{{ o.t[0] }}", "«<t>»", "{}", R"({"o": {"t": ["<t>"]}})"},
    {"client_wins_over_trusted", "{{ a }}", "C", R"({"a": "C"})", R"({"a": "T"})"},
};

TEST(JinjaProvenance, TrustedSpansFollowTheTemplatesOwnText) {
  for (const Row& r : kRows) {
    auto t = Template::parse(r.source);
    ASSERT_TRUE(t.is_ok()) << r.name << ": " << t.message();
    auto out = (*t)->render_marked(ojson::parse(r.trusted), ojson::parse(r.client));
    ASSERT_TRUE(out.is_ok()) << r.name << ": " << out.message();
    EXPECT_EQ(show(*out), r.want) << r.name;
    EXPECT_TRUE(well_formed(out->trusted, out->text.size())) << r.name;
    // render() over both contexts (the client's winning) is the same text.
    ojson both = ojson::parse(r.trusted);
    both.update(ojson::parse(r.client));
    auto plain = (*t)->render(both);
    ASSERT_TRUE(plain.is_ok()) << r.name << ": " << plain.message();
    EXPECT_EQ(*plain, out->text) << r.name;
  }
}

TEST(JinjaProvenance, RenderIsRenderMarkedsText) {
  auto t = Template::parse("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}");
  ASSERT_TRUE(t.is_ok());
  const ojson context = ojson::parse(R"({"messages": [{"role": "user", "content": "hi"}]})");
  auto marked = (*t)->render_marked(ojson::object(), context);
  ASSERT_TRUE(marked.is_ok());
  EXPECT_EQ(show(*marked), "«<»user«>»hi");
  EXPECT_EQ(*(*t)->render(context), marked->text);
  EXPECT_FALSE((*t)->render_marked(ojson::array(), context).is_ok());
  EXPECT_FALSE((*t)->render_marked(ojson::object(), ojson::array()).is_ok());
}

TEST(MarkedText, AppendKeepsSpansMergedAndClipped) {
  MarkedText a;
  a.append_trusted("ab");
  a.append_trusted("cd");
  a.append_client("ef");
  a.append_trusted("gh");
  ASSERT_EQ(a.trusted.size(), 2u);  // "abcd" is one span
  EXPECT_EQ(a.trusted[0].end, 4u);
  MarkedText b;
  b.append_trusted("x");
  b.append(a, 3, 7);  // "d" trusted, "ef" client, "g" trusted
  EXPECT_EQ(b.text, "xdefg");
  ASSERT_EQ(b.trusted.size(), 2u);
  EXPECT_EQ(b.trusted[0].begin, 0u);
  EXPECT_EQ(b.trusted[0].end, 2u);  // "x" and "d" joined
  EXPECT_EQ(b.trusted[1].begin, 4u);
  EXPECT_EQ(b.trusted[1].end, 5u);
  EXPECT_TRUE(is_trusted(b.trusted, 0, 2));
  EXPECT_FALSE(is_trusted(b.trusted, 1, 3));
  EXPECT_FALSE(is_trusted(b.trusted, 2, 3));
  EXPECT_TRUE(is_trusted(b.trusted, 4, 5));
  EXPECT_TRUE(well_formed(b.trusted, b.text.size()));
  EXPECT_FALSE(well_formed({{0, 2}, {2, 3}}, 3));  // touching spans must be one
  EXPECT_FALSE(well_formed({{0, 4}}, 3));
}

}  // namespace
}  // namespace duet::jinja
