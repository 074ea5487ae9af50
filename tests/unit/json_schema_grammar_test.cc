// JSON Schema → grammar: for each schema, texts a validator accepts must match the grammar and
// texts it rejects must not; unsupported keywords are refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "support/grammar_match.h"
#include "support/test_util.h"
#include "text/grammar/byte_automaton.h"
#include "text/grammar/gbnf.h"
#include "text/grammar/json_schema.h"
#include "text/grammar/number_range.h"
#include "text/grammar/regex.h"

namespace duet::grammar {
namespace {

using Json = nlohmann::ordered_json;

Grammar compile(const std::string& schema_text) {
  auto gbnf = json_schema_to_gbnf(Json::parse(schema_text));
  EXPECT_TRUE(gbnf.is_ok()) << gbnf.status().message();
  if (!gbnf.is_ok()) return {};
  auto g = parse_gbnf(gbnf.value());
  EXPECT_TRUE(g.is_ok()) << g.status().message() << "\n" << gbnf.value();
  return g.is_ok() ? std::move(g.value()) : Grammar{};
}

using test::grammar_matches;

struct Case {
  const char* schema;
  std::vector<const char*> valid;
  std::vector<const char*> invalid;
};

TEST(JsonSchemaGrammar, AcceptsWhatTheSchemaAcceptsAndNothingElse) {
  const std::vector<Case> cases = {
      {R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"]})",
       {R"({"name":"Ann","age":31})", "{\n  \"name\": \"B\\\"o\",\n  \"age\": -2\n}"},
       {R"({"name":"Ann"})", R"({"age":31,"name":"Ann"})", R"({"name":"Ann","age":3.5})",
        R"({"name":"Ann","age":31,"x":1})", R"([])", R"({"name":"Ann","age":031})"}},
      {R"({"type":"object","properties":{"a":{"type":"boolean"},"b":{"type":"null"},"c":{"type":"number"}},"required":["b"]})",
       {R"({"b":null})", R"({"a":true,"b":null})", R"({"b":null,"c":1e5})",
        R"({"a":false,"b":null,"c":-0.5})"},
       {R"({})", R"({"a":true})", R"({"a":true,"c":1})", R"({,"b":null})", R"({"b":null,})"}},
      {R"({"type":"array","items":{"type":"integer","minimum":1,"maximum":12},"minItems":2,"maxItems":3})",
       {"[1,12]", "[3, 4, 5]", "[ 10 ,11 ]"},
       {"[1]", "[1,2,3,4]", "[0,1]", "[13,1]", "[1,2,]"}},
      {R"({"enum":["red","green",3,null,{"k":[1]}]})",
       {R"("red")", "3", "null", R"({"k":[1]})"},
       {R"("blue")", "4", R"({"k":[2]})"}},
      {R"({"const":"fixed"})", {R"("fixed")"}, {R"("other")"}},
      {R"({"anyOf":[{"type":"string","maxLength":2},{"type":"integer","exclusiveMinimum":0}]})",
       {R"("ab")", R"("")", "7"},
       {R"("abc")", "0", "-1"}},
      {R"({"type":["string","null"],"minLength":1})", {R"("x")", "null"}, {R"("")", "1"}},
      {R"({"type":"string","nullable":true})", {R"("x")", "null"}, {"1"}},
      {R"({"type":"string","pattern":"^[A-Z]{2}-\\d{3}$"})",
       {R"("AB-123")"},
       {R"("Ab-123")", R"("AB-12")", R"("AB-1234")"}},
      {R"({"type":"string","pattern":"^a\"b\\\\c$"})", {R"("a\"b\\c")"}, {R"("a"b\c")"}},
      {R"({"type":"string","format":"date"})",
       {R"("2024-02-29")", R"("2023-12-31")", R"("2000-02-29")"},
       {R"("2023-02-29")", R"("1900-02-29")", R"("2023-04-31")", R"("2023-13-01")"}},
      {R"({"type":"string","format":"date-time"})",
       {R"("2024-01-05T13:45:00Z")", R"("2024-01-05T23:59:59.123+05:30")"},
       {R"("2024-01-05 13:45:00Z")", R"("2024-01-05T24:00:00Z")", R"("2024-01-05T13:45:00")"}},
      {R"({"type":"string","format":"uuid"})",
       {R"("123e4567-e89b-12d3-a456-426614174000")"},
       {R"("123e4567e89b12d3a456426614174000")"}},
      {R"({"type":"string","format":"email"})",
       {R"("a.b+c@example.co.uk")"},
       {R"("a..b@example.com")", R"("@example.com")", R"("ab@example")", R"("a@-x.com")"}},
      {R"({"type":"string","format":"ipv4"})",
       {R"("192.168.0.255")", R"("0.0.0.0")"},
       {R"("256.1.1.1")", R"("1.2.3")", R"("01.2.3.4")"}},
      {R"({"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]}},"required":["v","next"]}},"$ref":"#/$defs/node"})",
       {R"({"v":1,"next":{"v":2,"next":null}})"},
       {R"({"v":1,"next":{"v":2}})"}},
      {R"({"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"integer"}},"required":["b"]}]})",
       {R"({"a":"x","b":1})"},
       {R"({"a":"x"})", R"({"b":1})"}},
      {R"({"type":"array","prefixItems":[{"type":"string"},{"type":"number"}],"items":false})",
       {R"(["a",1.5])"},
       {R"(["a",1.5,2])", R"([1,"a"])"}},
      {R"({"type":"object","additionalProperties":{"type":"integer"}})",
       {R"({})", R"({"x":1,"y":2})"},
       {R"({"x":"1"})"}},
      {R"({"type":"number","minimum":-1,"maximum":1})",
       {"0", "1", "-1", "0.25", "-0.999", "1.000"},
       {"1.5", "-1.01", "2", "1.001", "1e0"}},
      {R"({"type":"number","exclusiveMinimum":0,"exclusiveMaximum":10})",
       {"0.1", "5", "9.99"},
       {"0", "0.0", "10", "10.0", "-3"}},
      {R"({"type":"number","minimum":0.1,"exclusiveMaximum":99.95})",
       {"0.1", "0.10", "0.2", "50", "99.9", "99.949999"},
       {"0.09999", "0", "-0.1", "99.95", "99.950", "100"}},
      {R"({"type":"number","exclusiveMinimum":-0.5,"maximum":-0.25})",
       {"-0.4999", "-0.25", "-0.3", "-0.2500001"},
       {"-0.5", "-0.2", "0", "-0.2499999"}},
      {R"({"type":"integer","minimum":-120,"maximum":4500})",
       {"-120", "-7", "0", "99", "4500", "1000"},
       {"-121", "4501", "-0", "00", "10000"}},
      {R"({"type":"integer","minimum":17})", {"17", "20", "123456"}, {"16", "-5", "0"}},
      {R"({"type":"integer","maximum":-3})", {"-3", "-100"}, {"-2", "0", "5"}},
      {"true", {"1", R"({"a":[true,null]})", R"("s")"}, {"", "tru"}},
      {R"({"type":"object","properties":{"s":{"type":"string"}}})",
       {R"({})", R"({"s":"v"})"},
       {R"({"t":"v"})"}},
  };
  for (const Case& c : cases) {
    const Grammar g = compile(c.schema);
    for (const char* v : c.valid)
      EXPECT_TRUE(grammar_matches(g, v)) << c.schema << "\nshould accept " << v;
    for (const char* v : c.invalid)
      EXPECT_FALSE(grammar_matches(g, v)) << c.schema << "\nshould refuse " << v;
  }
}

TEST(JsonSchemaGrammar, WhitespaceIsBounded) {
  const Grammar g =
      compile(R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]})");
  EXPECT_TRUE(grammar_matches(g, "{ \"a\" : 1 }"));
  EXPECT_TRUE(grammar_matches(g, "{\n    \"a\": 1\n}"));
  EXPECT_FALSE(grammar_matches(g, "{\n\n\n\n\n\n\"a\": 1}"));
  EXPECT_FALSE(grammar_matches(g, "{" + std::string(60, ' ') + "\"a\": 1}"));
}

TEST(JsonSchemaGrammar, NumbersEndAfterSixteenDigits) {
  const Grammar g = compile(R"({"type":"integer"})");
  EXPECT_TRUE(grammar_matches(g, "1234567890123456"));
  EXPECT_FALSE(grammar_matches(g, "12345678901234567"));
}

TEST(JsonSchemaGrammar, RefusesWhatItCannotEnforceByName) {
  const std::vector<std::pair<const char*, const char*>> refused = {
      {R"({"type":"object","minProperties":1})", "minProperties"},
      {R"({"not":{"type":"string"}})", "not"},
      {R"({"type":"integer","multipleOf":3})", "multipleOf"},
      {R"({"type":"object","patternProperties":{"^x":{}}})", "patternProperties"},
      {R"({"type":"array","items":{"type":"string"},"uniqueItems":true})", "uniqueItems"},
      {R"({"type":"string","format":"hostname"})", "hostname"},
      {R"({"$ref":"https://example.com/s.json"})", "not inside the schema"},
      {R"({"$ref":"#/$defs/missing"})", "points at nothing"},
      {R"({"type":"string","pattern":"(a)\\1"})", "backreferences"},
      {R"({"type":"string","pattern":"(?=a)a"})", "lookaround"},
      {R"({"type":"wat"})", "unknown type"},
      {R"({"allOf":[{"type":"string"},{"type":"integer"}]})", "exclude each other"},
      {R"({"type":"integer","minimum":5,"maximum":4})", "no number"},
      {R"({"type":"object","properties":{"q":{"type":"string"}},"nullable":["q"]})",
       "nullable must be true or false"},
      {R"({"type":"array","uniqueItems":"yes"})", "uniqueItems must be true or false"},
      {R"({"type":"array","maxItems":88888888888888888888888888888888888888888})", "above 10000"},
  };
  for (const auto& [schema, what] : refused) {
    auto r = json_schema_to_gbnf(Json::parse(schema));
    ASSERT_FALSE(r.is_ok()) << schema;
    EXPECT_NE(r.status().message().find(what), std::string::npos) << r.status().message();
  }
}

TEST(NumberRange, IntegerRangesAgreeWithArithmetic) {
  const std::vector<std::pair<int64_t, int64_t>> ranges = {
      {0, 0}, {0, 9}, {1, 10}, {5, 123}, {-57, 3}, {-1000, -999}, {99, 1001}, {-5, -1}, {7, 7}};
  for (auto [lo, hi] : ranges) {
    auto g = parse_gbnf("root ::= " + integer_range_gbnf(lo, hi));
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    for (int64_t v = lo - 30; v <= hi + 30; ++v)
      EXPECT_EQ(grammar_matches(g.value(), std::to_string(v)), v >= lo && v <= hi)
          << lo << ".." << hi << ": " << v;
  }
}

// Decimal bounds are exact: with values and bounds in ten-thousandths, the grammar must agree
// with integer arithmetic on every text, written shortest and with trailing zeros.
TEST(NumberRange, DecimalRangesAgreeWithArithmetic) {
  struct Range {
    const char* lo;  // nullptr: unbounded
    bool lo_excl;
    const char* hi;
    bool hi_excl;
  };
  const std::vector<Range> ranges = {
      {"-1.5", false, "0.25", false},  {"0", false, "1", true},
      {"-0.1", true, "0.1", true},     {"2.05", false, "2.3", false},
      {nullptr, false, "-0.75", true}, {"0.5", false, nullptr, false},
      {"-2", false, "-1.99", false},   {"1.5", false, "1.5", false},
      {"0.125", true, "0.126", true},  {"-0.0", true, "3", false},
      {"1e-3", false, "2.5E0", true},  {"-3.0001", true, nullptr, false},
  };
  constexpr int64_t kScale = 10000;
  auto scaled = [&](const char* text) {  // the bound's value in ten-thousandths
    return static_cast<int64_t>(std::llround(std::stod(text) * kScale));
  };
  auto write = [](int64_t v, int min_fraction_digits) {  // v / 10^4 as decimal text
    std::string out = v < 0 ? "-" : "";
    const uint64_t m = static_cast<uint64_t>(v < 0 ? -v : v);
    out += std::to_string(m / kScale);
    std::string frac = std::to_string(m % kScale + kScale).substr(1);
    while (static_cast<int>(frac.size()) > min_fraction_digits && !frac.empty() &&
           frac.back() == '0')
      frac.pop_back();
    if (!frac.empty()) out += "." + frac;
    return out;
  };
  for (const Range& r : ranges) {
    std::optional<Bound> lo, hi;
    if (r.lo) lo = bound_from_decimal_text(r.lo, r.lo_excl);
    if (r.hi) hi = bound_from_decimal_text(r.hi, r.hi_excl);
    ASSERT_EQ(lo.has_value(), r.lo != nullptr);
    ASSERT_EQ(hi.has_value(), r.hi != nullptr);
    auto g = parse_gbnf("root ::= " + decimal_range_gbnf(lo, hi));
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    ByteAutomaton a(g.value());
    for (int64_t v = -40000; v <= 40000; v += 7) {
      bool want = true;
      if (r.lo) want = want && (r.lo_excl ? v > scaled(r.lo) : v >= scaled(r.lo));
      if (r.hi) want = want && (r.hi_excl ? v < scaled(r.hi) : v <= scaled(r.hi));
      for (int digits : {0, 4}) {
        const std::string text = write(v, digits);
        if (text == "-0" || text == "-0.0000") continue;  // JSON's negative zero is not written
        const int32_t s = a.walk(a.start(), text);
        EXPECT_EQ(s != ByteAutomaton::kDead && a.accepting(s), want)
            << (r.lo ? r.lo : "-inf") << (r.lo_excl ? " < " : " <= ") << text
            << (r.hi_excl ? " < " : " <= ") << (r.hi ? r.hi : "inf");
      }
    }
  }
}

TEST(NumberRange, BoundsReadExactlyFromTheirText) {
  auto b = bound_from_decimal_text("-12.500", false);
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(b->negative);
  EXPECT_EQ(b->whole, 12u);
  EXPECT_EQ(b->fraction, "5");
  b = bound_from_decimal_text("1.25e-5", true);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->whole, 0u);
  EXPECT_EQ(b->fraction, "0000125");
  EXPECT_TRUE(b->exclusive);
  b = bound_from_decimal_text("7E+2", false);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->whole, 700u);
  EXPECT_EQ(b->fraction, "");
  EXPECT_FALSE(bound_from_decimal_text("1e-40", false).has_value());  // too many places
  EXPECT_FALSE(bound_from_decimal_text("2e16", false).has_value());   // above 10^15
  EXPECT_FALSE(bound_from_decimal_text("abc", false).has_value());
  EXPECT_FALSE(bound_from_decimal_text("1e", false).has_value());
}

TEST(Regex, JsonStringTargetEscapes) {
  auto body = regex_to_gbnf("a.b", RegexTarget::kJsonString);
  ASSERT_TRUE(body.is_ok());
  auto g = parse_gbnf("root ::= " + body.value());
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  EXPECT_TRUE(grammar_matches(g.value(), "axb"));
  EXPECT_TRUE(grammar_matches(g.value(), "a\\\"b"));
  EXPECT_TRUE(grammar_matches(g.value(), "a\\tb"));
  EXPECT_FALSE(grammar_matches(g.value(), "a\"b"));
  EXPECT_FALSE(grammar_matches(g.value(), "a\\nb"));  // . is not a newline
}

TEST(Regex, RawPatterns) {
  const std::vector<std::tuple<const char*, const char*, bool>> cases = {
      {"(cat|dog)s?", "dogs", true},
      {"(cat|dog)s?", "cow", false},
      {"\\d{2,3}-[^x]+", "12-ab", true},
      {"\\d{2,3}-[^x]+", "1-ab", false},
      {"[\\w.]+@x", "a_b.c@x", true},
      {"a{2}b*?", "aab", true},
      {"(?:ab)+", "abab", true},
      {"(?<year>\\d{4})", "2024", true},
      {"\\s\\S", " x", true},
      {"[a\\-z]", "-", true},
      // A repetition of something that may be empty: GBNF refuses such a loop, so the
      // compiler writes it over the parts that cannot be empty, with the same language.
      {"(a|)*", "aaa", true},
      {"(a|)*", "", true},
      {"(a|)*", "ab", false},
      {"(a?b*)+c", "abbac", true},
      {"(a?b*)+c", "c", true},
      {"(a?b*)+c", "acb", false},
      {"(x|(y?)*){2,}z", "yxyz", true},
      {"(x|(y?)*){2,}z", "xzz", false},
      {"()*a", "a", true},
      {"(|)+", "", true},
      {"(0|[1-9]0-9]{0,0|)*", "010-9]{0,00", true},
      {"(0|[1-9]0-9]{0,0|)*", "02", false},
  };
  for (const auto& [pattern, text, want] : cases) {
    auto body = regex_to_gbnf(pattern, RegexTarget::kRaw);
    ASSERT_TRUE(body.is_ok()) << pattern << ": " << body.status().message();
    auto g = parse_gbnf("root ::= " + body.value());
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    EXPECT_EQ(grammar_matches(g.value(), text), want) << pattern << " on " << text;
  }
}

// The JSON-Schema-Test-Suite (draft 4, from npm): every schema the compiler takes must never
// let through an instance the suite marks invalid (the grammar may be stricter than the schema,
// never looser), and a keyword it refuses is named in the error.
TEST(JsonSchemaGrammar, SuiteInvalidInstancesNeverMatch) {
  const std::filesystem::path dir = std::filesystem::path(test::default_tokenizer_dir()) /
                                    "../../../json-schema-test-suite/tests/draft4";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir << " (scripts/setup installs it)";
  int compiled = 0, refused = 0, invalid_checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const Json groups = Json::parse(in);
    for (const Json& group : groups) {
      const std::string where =
          entry.path().filename().string() + ": " + group.value("description", std::string());
      auto gbnf = json_schema_to_gbnf(group["schema"]);
      if (!gbnf.is_ok()) {
        ++refused;
        if (std::getenv("DUET_SUITE_VERBOSE"))
          std::printf("refused %s: %s\n", where.c_str(), gbnf.status().message().c_str());
        EXPECT_NE(gbnf.status().message().find("JSON schema at"), std::string::npos) << where;
        continue;
      }
      auto g = parse_gbnf(gbnf.value());
      ASSERT_TRUE(g.is_ok()) << where << ": " << g.status().message();
      ++compiled;
      for (const Json& t : group["tests"]) {
        if (t["valid"].get<bool>()) continue;
        ++invalid_checked;
        const std::string text = t["data"].dump();
        EXPECT_FALSE(grammar_matches(g.value(), text))
            << where << " / " << t.value("description", "") << ": the grammar accepts " << text;
      }
    }
  }
  EXPECT_GT(compiled, 40);
  EXPECT_GT(invalid_checked, 80);
  std::printf("[ suite ] %d schemas compiled, %d refused by name, %d invalid instances rejected\n",
              compiled, refused, invalid_checked);
}

}  // namespace
}  // namespace duet::grammar
