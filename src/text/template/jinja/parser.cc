#include "text/template/jinja/parser.h"

#include "text/template/jinja/parser_impl.h"

namespace duet::jinja {

const char* op_name(Op op) {
  switch (op) {
    case Op::kAdd:
      return "+";
    case Op::kSub:
      return "-";
    case Op::kMul:
      return "*";
    case Op::kDiv:
      return "/";
    case Op::kFloorDiv:
      return "//";
    case Op::kMod:
      return "%";
    case Op::kPow:
      return "**";
    case Op::kConcat:
      return "~";
    case Op::kEq:
      return "==";
    case Op::kNe:
      return "!=";
    case Op::kLt:
      return "<";
    case Op::kGt:
      return ">";
    case Op::kLe:
      return "<=";
    case Op::kGe:
      return ">=";
    case Op::kIn:
      return "in";
    case Op::kNotIn:
      return "not in";
    case Op::kAnd:
      return "and";
    case Op::kOr:
      return "or";
    case Op::kNot:
      return "not";
    case Op::kNeg:
      return "-";
    case Op::kPos:
      return "+";
  }
  return "?";
}

Status Parser::parse_node(StmtPtr& out) {
  const Token& t = toks_[pos_];
  switch (t.kind) {
    case Tok::kComment:
      ++pos_;
      return {};
    case Tok::kText:
    case Tok::kRawText: {
      out = std::make_unique<Stmt>();
      out->kind = StmtKind::kText;
      out->pos = Pos{t.offset};
      out->text = t.value;
      ++pos_;
      return {};
    }
    case Tok::kOpenExpr: {
      ++pos_;
      out = std::make_unique<Stmt>();
      out->kind = StmtKind::kOutput;
      out->pos = Pos{t.offset};
      DUET_TRY(parse_expression(out->expr));
      return expect(Tok::kCloseExpr, "'}}'");
    }
    case Tok::kOpenStmt:
      return parse_statement(out);
    default:
      return error("unexpected " + describe_next());
  }
}

// Statements until one of `ends` opens a tag.
Status Parser::parse_block(Body& body, std::initializer_list<std::string_view> ends, Pos opened,
                           const char* what) {
  NestingGuard guard(nesting_);
  DUET_TRY(check_nesting());
  while (!is_tag(ends)) {
    if (pos_ >= toks_.size())
      return error_at(opened, std::string("'") + what + "' is never closed");
    StmtPtr s;
    DUET_TRY(parse_node(s));
    if (s) body.push_back(std::move(s));
  }
  return {};
}

Status Parser::parse_statement(StmtPtr& out) {
  const Pos at = here();
  ++pos_;  // {%
  auto keyword = take_identifier("a statement name");
  if (!keyword) return keyword.status();
  const std::string& k = *keyword;
  out = std::make_unique<Stmt>();
  out->pos = at;
  if (k == "if") return parse_if(*out);
  if (k == "for") return parse_for(*out);
  if (k == "set") return parse_set(*out);
  if (k == "macro") return parse_macro(*out);
  if (k == "break" || k == "continue") {
    out->kind = k == "break" ? StmtKind::kBreak : StmtKind::kContinue;
    return expect(Tok::kCloseStmt, "'%}'");
  }
  if (k == "elif" || k == "else" || k == "endif" || k == "endfor" || k == "endmacro" ||
      k == "endset")
    return error_at(at, "'" + k + "' without a matching opening tag");
  return error_at(at, "unsupported statement '" + k + "'");
}

Status Parser::parse_if(Stmt& s) {
  s.kind = StmtKind::kIf;
  DUET_TRY(parse_expression(s.expr));
  DUET_TRY(expect(Tok::kCloseStmt, "'%}'"));
  DUET_TRY(parse_block(s.body, {"elif", "else", "endif"}, s.pos, "if"));
  if (is_tag({"elif"})) {
    auto elif = std::make_unique<Stmt>();
    elif->pos = here();
    pos_ += 2;
    DUET_TRY(parse_if(*elif));  // consumes the shared endif
    s.else_body.push_back(std::move(elif));
    return {};
  }
  if (is_tag({"else"})) {
    pos_ += 2;
    DUET_TRY(expect(Tok::kCloseStmt, "'%}'"));
    DUET_TRY(parse_block(s.else_body, {"endif"}, s.pos, "if"));
  }
  return expect_end_tag("endif");
}

Status Parser::parse_for(Stmt& s) {
  s.kind = StmtKind::kFor;
  const bool paren = is_op("(");
  if (paren) ++pos_;
  do {
    auto name = take_identifier("a loop variable");
    if (!name) return name.status();
    s.names.push_back(*name);
  } while (is_op(",") && (++pos_, true));
  if (paren) DUET_TRY(expect_op(")"));
  DUET_TRY(expect_name("in"));
  ExprPtr iterable;
  DUET_TRY(parse_expression(iterable));
  // `for x in xs if cond` parses as a ternary without else: the condition filters.
  if (iterable->kind == ExprKind::kTernary && !iterable->c) {
    s.filter = std::move(iterable->b);
    s.expr = std::move(iterable->a);
  } else {
    s.expr = std::move(iterable);
  }
  if (is_name("recursive")) return error("recursive loops are not supported");
  DUET_TRY(expect(Tok::kCloseStmt, "'%}'"));
  DUET_TRY(parse_block(s.body, {"else", "endfor"}, s.pos, "for"));
  if (is_tag({"else"})) {
    pos_ += 2;
    DUET_TRY(expect(Tok::kCloseStmt, "'%}'"));
    DUET_TRY(parse_block(s.else_body, {"endfor"}, s.pos, "for"));
  }
  return expect_end_tag("endfor");
}

Status Parser::parse_set(Stmt& s) {
  s.kind = StmtKind::kSet;
  auto first = take_identifier("a variable name");
  if (!first) return first.status();
  s.names.push_back(*first);
  if (is_op(".")) {  // set ns.attr = value
    ++pos_;
    auto attr = take_identifier("an attribute name");
    if (!attr) return attr.status();
    s.object = node(ExprKind::kName, s.pos);
    s.object->name = *first;
    s.names = {*attr};
  } else {
    while (is_op(",")) {
      ++pos_;
      auto more = take_identifier("a variable name");
      if (!more) return more.status();
      s.names.push_back(*more);
    }
  }
  if (is(Tok::kCloseStmt)) {  // block set: {% set x %}…{% endset %}
    if (s.object || s.names.size() != 1) return error("a block set takes one variable name");
    ++pos_;
    s.kind = StmtKind::kSetBlock;
    DUET_TRY(parse_block(s.body, {"endset"}, s.pos, "set"));
    return expect_end_tag("endset");
  }
  DUET_TRY(expect_op("="));
  DUET_TRY(parse_expression_sequence(s.expr));
  return expect(Tok::kCloseStmt, "'%}'");
}

Status Parser::parse_macro(Stmt& s) {
  s.kind = StmtKind::kMacro;
  s.macro = std::make_unique<MacroStmt>();
  MacroStmt& m = *s.macro;
  m.pos = s.pos;
  auto name = take_identifier("a macro name");
  if (!name) return name.status();
  m.name = *name;
  DUET_TRY(expect_op("("));
  bool saw_default = false;
  while (!is_op(")")) {
    auto pname = take_identifier("a parameter name");
    if (!pname) return pname.status();
    for (const MacroParam& p : m.params)
      if (p.name == *pname) return error("duplicate parameter '" + *pname + "'");
    MacroParam p{*pname, nullptr};
    if (is_op("=")) {
      ++pos_;
      DUET_TRY(parse_expression(p.default_value));
      saw_default = true;
    } else if (saw_default) {
      return error("parameter '" + *pname + "' without a default follows one with a default");
    }
    m.params.push_back(std::move(p));
    if (!is_op(",")) break;
    ++pos_;
  }
  DUET_TRY(expect_op(")"));
  DUET_TRY(expect(Tok::kCloseStmt, "'%}'"));
  macros_.push_back(&m);
  const Status body = parse_block(m.body, {"endmacro"}, s.pos, "macro");
  macros_.pop_back();
  DUET_TRY(body);
  DUET_TRY(expect(Tok::kOpenStmt, "'{%'"));
  DUET_TRY(expect_name("endmacro"));
  if (is(Tok::kName)) ++pos_;  // {% endmacro name %}
  return expect(Tok::kCloseStmt, "'%}'");
}

Result<std::unique_ptr<Program>> parse_program(std::string_view source) {
  auto program = std::make_unique<Program>();
  program->source.assign(source);
  program->map = std::make_unique<SourceMap>(program->source);
  auto tokens = tokenize(program->source);
  if (!tokens) return tokens.status();
  Parser parser(std::move(tokens.value()), *program);
  DUET_TRY(parser.parse(program->body));
  return program;
}

}  // namespace duet::jinja
