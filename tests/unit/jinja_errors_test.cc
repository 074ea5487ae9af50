// Bad templates and hostile ones: each gives a clear Status (syntax errors with line and
// column, runtime errors naming what was undefined), and every kind of bomb — recursion,
// output, loops, doubling strings and lists, deep nesting — stops quickly under the
// render limits instead of hanging or crashing.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "text/template/jinja/jinja.h"

namespace duet::jinja {
namespace {

using ojson = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

// The error message of parsing or rendering `source`, or "rendered: <text>" if it worked.
std::string outcome(const std::string& source, const RenderLimits& limits = {},
                    const ojson& context = ojson::object()) {
  auto t = Template::parse(source);
  if (!t) return t.message();
  auto out = (*t)->render(context, limits);
  if (!out) return out.message();
  return "rendered: " + *out;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

TEST(JinjaErrors, SyntaxErrorsNameLineAndColumn) {
  const struct {
    std::string source, want;
  } cases[] = {
      {"a\nb {{ 1 + }} c",
       "template syntax error at line 2, column 10: expected an expression, found '}}'"},
      {"line1\n{% if x %}\nbody", "line 2, column 1: 'if' is never closed"},
      {"{% for x in xs %}{{ x }}", "line 1, column 1: 'for' is never closed"},
      {"{{ 1 ! 2 }}", "line 1, column 6: unexpected character '!'"},
      {"{{ 'abc }}", "line 1, column 4: string literal is not closed"},
      {"{% endfor %}", "line 1, column 1: 'endfor' without a matching opening tag"},
      {"x {# never closed", "line 1, column 3: comment is not closed with #}"},
      {"{% include 'other.jinja' %}", "line 1, column 1: unsupported statement 'include'"},
      {"{% macro m(a, a) %}{% endmacro %}", "duplicate parameter 'a'"},
      {"{% macro m(a=1, b) %}{% endmacro %}", "without a default follows one with a default"},
      {"{{ f(a=1, 2) }}", "positional argument after a keyword argument"},
      {"{{ xs[] }}", "line 1, column 6: empty subscript []"},
      {"{% raw %}never closed", "line 1, column 1: raw block is not closed with {% endraw %}"},
      // Columns count characters, and lstrip_blocks does not shift them.
      {"é{{ 1 + }}", "line 1, column 9:"},
      {"x\n    {% if ) %}{% endif %}", "line 2, column 11: expected an expression, found ')'"},
  };
  for (const auto& c : cases) {
    const std::string got = outcome(c.source);
    EXPECT_NE(got.find(c.want), std::string::npos) << c.source << "\n  got: " << got;
  }
}

TEST(JinjaErrors, RuntimeErrorsSayWhatWentWrong) {
  const struct {
    std::string source, want;
  } cases[] = {
      {"{{ nosuchmacro(1) }}",
       "line 1, column 4: 'nosuchmacro' is undefined: no such macro or function"},
      {"{{ message.content.strip() }}",
       "cannot call 'strip()' on 'message.content', which is undefined"},
      {"{{ 'a' + message.content }}", "cannot apply +: 'message.content' is undefined"},
      {"{{ 1 | nosuchfilter }}", "unknown filter 'nosuchfilter'"},
      {"{{ 1 is nosuchtest }}", "unknown test 'nosuchtest'"},
      {"{{ 1 / 0 }}", "division by zero"},
      {"{{ 9223372036854775807 + 1 }}", "integer overflow"},
      {"{{ 5(1) }}", "cannot call integer (not a function)"},
      {"{% for x in 5 %}{% endfor %}", "cannot loop over integer"},
      {"{% set a, b = [1] %}", "cannot unpack 1 values into 2 names"},
      {"{% set x = 1 %}{% set x.y = 2 %}",
       "cannot set an attribute of integer 'x' (only of a namespace)"},
      {"{% break %}", "'break' or 'continue' outside a loop"},
      {"{{ 'x'.nosuchmethod() }}", "string has no method 'nosuchmethod'"},
      {"{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", "macro 'm' takes at most 1 arguments, got 2"},
      {"{% macro m(a) %}{% endmacro %}{{ m(b=2) }}", "macro 'm' has no parameter 'b'"},
      {"{{ {} | tojson(indent='x') }}", "tojson(): indent must be an integer"},
      {"{{ [1, 'a'] | sort }}", "cannot sort string with integer"},
      {"{{ [1][::0] }}", "slice step cannot be zero"},
  };
  for (const auto& c : cases) {
    const std::string got = outcome(c.source);
    EXPECT_NE(got.find(c.want), std::string::npos) << c.source << "\n  got: " << got;
  }
}

TEST(JinjaErrors, RaiseExceptionCarriesTheMessage) {
  const std::string got = outcome(
      "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') "
      "}}{% endif %}",
      {}, ojson::parse(R"({"messages": [{"role": "system", "content": "x"}]})"));
  EXPECT_EQ(
      got,
      "template error at line 1, column 44: template raised an error: System role not supported");
}

// The bombs below run under an explicit budget of a million steps so that the test stays
// quick in unoptimized sanitizer builds; the default is ten times that (checked here).
RenderLimits bomb_limits() {
  RenderLimits limits;
  limits.max_steps = 1'000'000;
  return limits;
}

TEST(JinjaErrors, DefaultLimitsAreTheDocumentedOnes) {
  const RenderLimits d;
  EXPECT_EQ(d.max_depth, 64);
  EXPECT_EQ(d.max_output_bytes, 8u << 20);
  EXPECT_EQ(d.max_steps, 10'000'000u);
}

TEST(JinjaErrors, SelfRecursiveMacroHitsTheDepthLimit) {
  const auto start = Clock::now();
  const std::string got = outcome("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  EXPECT_EQ(got,
            "template error at line 1, column 20: macro calls nested deeper than 64 (runaway "
            "recursion in 'f'?)");
  // A bounded recursion passes under the default limit and fails under a smaller one.
  const std::string bounded =
      "{% macro f(n) %}{% if n < 10 %}{{ n }}{{ f(n + 1) }}{% endif %}{% endmacro %}{{ f(0) }}";
  EXPECT_EQ(outcome(bounded), "rendered: 0123456789");
  RenderLimits shallow;
  shallow.max_depth = 5;
  EXPECT_NE(outcome(bounded, shallow).find("nested deeper than 5"), std::string::npos);
  // Two calls per level within the depth limit: 2^60 calls unless the step budget stops it.
  const std::string exponential = outcome(
      "{% macro f(n) %}{% if n < 60 %}{{ f(n + 1) ~ f(n + 1) }}{% endif %}{% endmacro %}{{ f(0) "
      "}}",
      bomb_limits());
  EXPECT_EQ(exponential,
            "template error: template stopped after 1000000 evaluation steps (a runaway loop?)");
  EXPECT_LT(seconds_since(start), 30.0);
}

TEST(JinjaErrors, OutputBombsStopAtTheOutputLimit) {
  const auto start = Clock::now();
  RenderLimits limits;
  limits.max_output_bytes = 1 << 20;
  const std::string loop =
      outcome("{% for i in range(1000000) %}0123456789abcdef{% endfor %}", limits);
  EXPECT_NE(loop.find("output is longer than 1048576 bytes"), std::string::npos) << loop;
  // Doubling a string: 2^64 bytes unless the string size limit stops it.
  const std::string doubling = outcome(
      "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% "
      "endfor %}{{ ns.s|length }}",
      limits);
  EXPECT_NE(doubling.find("string longer than 1048576 bytes"), std::string::npos) << doubling;
  // The same inside macro output that is never printed.
  const std::string hidden = outcome(
      "{% macro m() %}{% for i in range(100000) %}0123456789abcdef{% endfor %}{% endmacro %}{% set "
      "x = m() %}",
      limits);
  EXPECT_NE(hidden.find("output is longer"), std::string::npos) << hidden;
  EXPECT_LT(seconds_since(start), 30.0);
}

TEST(JinjaErrors, LoopBombsStopAtTheStepLimit) {
  const auto start = Clock::now();
  // Nested huge loops: 10^10 turns.
  const std::string nested =
      outcome("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
              bomb_limits());
  EXPECT_EQ(nested,
            "template error: template stopped after 1000000 evaluation steps (a runaway loop?)");
  // One range longer than the whole budget is refused before anything is allocated.
  EXPECT_EQ(outcome("{{ range(10 ** 15) | length }}"),
            "template error at line 1, column 4: range() of 1000000000000000 numbers is too long");
  // Doubling a list.
  const std::string list = outcome(
      "{% set ns = namespace(l=[1]) %}{% for i in range(100) %}{% set ns.l = ns.l + ns.l %}{% "
      "endfor %}",
      bomb_limits());
  EXPECT_NE(list.find("evaluation steps"), std::string::npos) << list;
  // Scanning a long string over and over is paid for by its length.
  const std::string scans = outcome(
      "{% set s = range(100000) | join %}{% for i in range(100000) %}{% if 'y' in s %}{% endif "
      "%}{% endfor %}",
      bomb_limits());
  EXPECT_NE(scans.find("evaluation steps"), std::string::npos) << scans;
  // A small budget stops a small loop.
  RenderLimits tiny;
  tiny.max_steps = 1000;
  EXPECT_NE(outcome("{% for i in range(900) %}{{ i }}{% endfor %}", tiny)
                .find("after 1000 evaluation steps"),
            std::string::npos);
  EXPECT_EQ(outcome("{% for i in range(3) %}{{ i }}{% endfor %}", tiny), "rendered: 012");
  EXPECT_LT(seconds_since(start), 30.0);
}

TEST(JinjaErrors, DeepNestingIsRefusedNotACrash) {
  const std::string parens =
      "{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}";
  EXPECT_NE(outcome(parens).find("nested more than 200 levels deep"), std::string::npos);
  std::string ifs;
  for (int i = 0; i < 5000; ++i) ifs += "{% if true %}";
  EXPECT_NE(outcome(ifs).find("nested more than 200 levels deep"), std::string::npos);
  EXPECT_NE(outcome("{{ " + std::string(100000, '-') + "1 }}").find("nested more than"),
            std::string::npos);
  EXPECT_NE(outcome("{{ " + std::string(50000, '[') + std::string(50000, ']') + " }}")
                .find("nested more than"),
            std::string::npos);
  // Values built ever deeper by a loop.
  const std::string deep = outcome(
      "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor "
      "%}");
  EXPECT_NE(deep.find("nested too deeply"), std::string::npos) << deep;
  // A context nested deeper than the engine keeps.
  ojson j = 1;
  for (int i = 0; i < 1000; ++i) j = ojson::array({j});
  EXPECT_NE(outcome("{{ x }}", {}, ojson{{"x", j}}).find("context nested deeper than 512"),
            std::string::npos);
}

TEST(JinjaErrors, NamespacesCannotFormCycles) {
  EXPECT_NE(
      outcome("{% set ns = namespace() %}{% set ns.me = ns %}").find("cannot hold a namespace"),
      std::string::npos);
  EXPECT_NE(outcome("{% set ns = namespace() %}{% set ns.l = [1, {'a': ns}] %}")
                .find("cannot hold a namespace"),
            std::string::npos);
  // Holding one at creation is fine: no cycle can follow.
  EXPECT_EQ(outcome("{% set a = namespace(v=1) %}{% set b = namespace(inner=a) %}{{ b.inner.v }}"),
            "rendered: 1");
}

TEST(JinjaErrors, ContextMustBeAnObject) {
  auto t = Template::parse("{{ x }}");
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ((*t)->render(ojson::array()).message(), "the template context must be a JSON object");
}

}  // namespace
}  // namespace duet::jinja
