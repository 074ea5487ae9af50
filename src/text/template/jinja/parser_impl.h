// The recursive-descent parser behind parse_program (internal): parser.cc holds the
// statements, parser_expressions.cc the expressions.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "text/template/jinja/ast.h"
#include "text/template/jinja/lexer.h"
#include "text/template/jinja/parser.h"

namespace duet::jinja {

class Parser {
 public:
  Parser(std::vector<Token> tokens, const Program& program)
      : toks_(std::move(tokens)), program_(program) {}

  Status parse(Body& out) {
    while (pos_ < toks_.size()) {
      StmtPtr s;
      DUET_TRY(parse_node(s));
      if (s) out.push_back(std::move(s));
    }
    return {};
  }

 private:
  std::vector<Token> toks_;
  const Program& program_;
  size_t pos_ = 0;
  int nesting_ = 0;
  std::vector<MacroStmt*> macros_;  // macros being parsed, innermost last

  // ------------------------------------------------------------------ token helpers
  const Token* peek(size_t ahead = 0) const {
    return pos_ + ahead < toks_.size() ? &toks_[pos_ + ahead] : nullptr;
  }
  bool is(Tok kind, size_t ahead = 0) const {
    const Token* t = peek(ahead);
    return t && t->kind == kind;
  }
  bool is_op(std::string_view op, size_t ahead = 0) const {
    const Token* t = peek(ahead);
    return t && t->kind == Tok::kOperator && t->value == op;
  }
  bool is_name(std::string_view name, size_t ahead = 0) const {
    const Token* t = peek(ahead);
    return t && t->kind == Tok::kName && t->value == name;
  }
  // `{% name` — a statement tag of that name is next.
  bool is_tag(std::initializer_list<std::string_view> names) const {
    if (!is(Tok::kOpenStmt)) return false;
    for (std::string_view n : names)
      if (is_name(n, 1)) return true;
    return false;
  }
  Pos here() const {
    if (pos_ < toks_.size()) return Pos{toks_[pos_].offset};
    return Pos{static_cast<uint32_t>(program_.source.size())};
  }
  Status error(const std::string& msg) const { return error_at(here(), msg); }
  Status error_at(Pos p, const std::string& msg) const {
    return Status::error(program_.where(p) + ": " + msg);
  }
  std::string describe_next() const {
    const Token* t = peek();
    if (!t) return "the end of the template";
    switch (t->kind) {
      case Tok::kText:
      case Tok::kRawText:
        return "text";
      case Tok::kComment:
        return "a comment";
      case Tok::kCloseStmt:
        return "'%}'";
      case Tok::kCloseExpr:
        return "'}}'";
      case Tok::kOpenStmt:
        return "'{%'";
      case Tok::kOpenExpr:
        return "'{{'";
      case Tok::kString:
        return "a string";
      default:
        return "'" + t->value + "'";
    }
  }
  Status expect_op(std::string_view op) {
    if (!is_op(op)) return error("expected '" + std::string(op) + "', found " + describe_next());
    ++pos_;
    return {};
  }
  Status expect(Tok kind, const char* what) {
    if (!is(kind)) return error(std::string("expected ") + what + ", found " + describe_next());
    ++pos_;
    return {};
  }
  Status expect_name(std::string_view name) {
    if (!is_name(name))
      return error("expected '" + std::string(name) + "', found " + describe_next());
    ++pos_;
    return {};
  }
  Result<std::string> take_identifier(const char* what) {
    if (!is(Tok::kName))
      return error(std::string("expected ") + what + ", found " + describe_next());
    return toks_[pos_++].value;
  }
  // `{% endX %}`
  Status expect_end_tag(std::string_view name) {
    DUET_TRY(expect(Tok::kOpenStmt, "'{%'"));
    DUET_TRY(expect_name(name));
    return expect(Tok::kCloseStmt, "'%}'");
  }

  struct NestingGuard {
    int& n;
    explicit NestingGuard(int& counter) : n(counter) { ++n; }
    ~NestingGuard() { --n; }
  };
  Status check_nesting() const {
    if (nesting_ > kMaxParseNesting)
      return error("nested more than " + std::to_string(kMaxParseNesting) + " levels deep");
    return {};
  }

  static ExprPtr node(ExprKind kind, Pos pos) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = pos;
    return e;
  }

  // ------------------------------------------------------------------ statements
  Status parse_node(StmtPtr& out);
  Status parse_block(Body& body, std::initializer_list<std::string_view> ends, Pos opened,
                     const char* what);
  Status parse_statement(StmtPtr& out);
  Status parse_if(Stmt& s);
  Status parse_for(Stmt& s);
  Status parse_set(Stmt& s);
  Status parse_macro(Stmt& s);

  // ------------------------------------------------------------------ expressions
  Status parse_expression_sequence(ExprPtr& out);
  Status parse_expression(ExprPtr& out);
  Status binary(ExprPtr& left, Op op, Pos at, Status (Parser::*next)(ExprPtr&));
  Status parse_or(ExprPtr& out);
  Status parse_and(ExprPtr& out);
  Status parse_not(ExprPtr& out);
  Status parse_comparison(ExprPtr& out);
  Status parse_additive(ExprPtr& out);
  Status parse_multiplicative(ExprPtr& out);
  Status parse_power(ExprPtr& out);
  Status parse_test(ExprPtr& out);
  bool starts_primary() const;
  Status parse_filter(ExprPtr& out);
  Status parse_unary(ExprPtr& out);
  Status parse_call_args(Expr& e);
  Status parse_postfix_primary(ExprPtr& out);
  Status parse_subscript(ExprPtr& object, Pos at);
  Status integer_literal(const std::string& digits, Value& out);
  Status parse_primary(ExprPtr& out);
  Status parse_name(ExprPtr& out);
};

}  // namespace duet::jinja
