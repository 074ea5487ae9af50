// Expressions, lowest precedence first: ternary, or, and, not, comparison, + - ~,
// * / // %, **, is, |, unary +/- and the postfix chain of calls, attributes, subscripts.
#include <cerrno>
#include <cstdlib>

#include "text/template/jinja/parser_impl.h"

namespace duet::jinja {
namespace {

// Tests that take an argument without parentheses: `x is divisibleby 3`.
bool test_takes_argument(const std::string& name) {
  for (const char* t : {"equalto", "eq", "ne", "sameas", "divisibleby", "gt", "greaterthan", "lt",
                        "lessthan", "ge", "le", "in"})
    if (name == t) return true;
  return false;
}

}  // namespace

// a, b, c → a tuple (for `set` right-hand sides and parentheses).
Status Parser::parse_expression_sequence(ExprPtr& out) {
  const Pos at = here();
  DUET_TRY(parse_expression(out));
  if (!is_op(",")) return {};
  auto tuple = node(ExprKind::kTuple, at);
  tuple->items.push_back(std::move(out));
  while (is_op(",")) {
    ++pos_;
    if (is_op(")") || is(Tok::kCloseStmt)) break;  // trailing comma
    ExprPtr e;
    DUET_TRY(parse_expression(e));
    tuple->items.push_back(std::move(e));
  }
  out = std::move(tuple);
  return {};
}

Status Parser::parse_expression(ExprPtr& out) {
  NestingGuard guard(nesting_);
  DUET_TRY(check_nesting());
  const Pos at = here();
  DUET_TRY(parse_or(out));
  if (!is_name("if")) return {};
  ++pos_;
  auto t = node(ExprKind::kTernary, at);
  t->a = std::move(out);
  DUET_TRY(parse_or(t->b));
  if (is_name("else")) {
    ++pos_;
    DUET_TRY(parse_expression(t->c));
  }
  out = std::move(t);
  return {};
}

Status Parser::binary(ExprPtr& left, Op op, Pos at, Status (Parser::*next)(ExprPtr&)) {
  auto b = node(ExprKind::kBinary, at);
  b->op = op;
  b->a = std::move(left);
  DUET_TRY((this->*next)(b->b));
  left = std::move(b);
  return {};
}

Status Parser::parse_or(ExprPtr& out) {
  DUET_TRY(parse_and(out));
  while (is_name("or")) {
    const Pos at = here();
    ++pos_;
    DUET_TRY(binary(out, Op::kOr, at, &Parser::parse_and));
  }
  return {};
}

Status Parser::parse_and(ExprPtr& out) {
  DUET_TRY(parse_not(out));
  while (is_name("and")) {
    const Pos at = here();
    ++pos_;
    DUET_TRY(binary(out, Op::kAnd, at, &Parser::parse_not));
  }
  return {};
}

Status Parser::parse_not(ExprPtr& out) {
  if (!is_name("not")) return parse_comparison(out);
  NestingGuard guard(nesting_);
  DUET_TRY(check_nesting());
  auto u = node(ExprKind::kUnary, here());
  ++pos_;
  u->op = Op::kNot;
  DUET_TRY(parse_not(u->a));
  out = std::move(u);
  return {};
}

Status Parser::parse_comparison(ExprPtr& out) {
  DUET_TRY(parse_additive(out));
  while (true) {
    const Pos at = here();
    Op op;
    if (is_name("not") && is_name("in", 1)) {
      op = Op::kNotIn;
      pos_ += 2;
    } else if (is_name("in")) {
      op = Op::kIn;
      ++pos_;
    } else if (is_op("==")) {
      op = Op::kEq;
      ++pos_;
    } else if (is_op("!=")) {
      op = Op::kNe;
      ++pos_;
    } else if (is_op("<")) {
      op = Op::kLt;
      ++pos_;
    } else if (is_op(">")) {
      op = Op::kGt;
      ++pos_;
    } else if (is_op("<=")) {
      op = Op::kLe;
      ++pos_;
    } else if (is_op(">=")) {
      op = Op::kGe;
      ++pos_;
    } else {
      return {};
    }
    DUET_TRY(binary(out, op, at, &Parser::parse_additive));
  }
}

Status Parser::parse_additive(ExprPtr& out) {
  DUET_TRY(parse_multiplicative(out));
  while (is_op("+") || is_op("-") || is_op("~")) {
    const Pos at = here();
    const char c = toks_[pos_++].value[0];
    DUET_TRY(binary(out,
                    c == '+'   ? Op::kAdd
                    : c == '-' ? Op::kSub
                               : Op::kConcat,
                    at, &Parser::parse_multiplicative));
  }
  return {};
}

Status Parser::parse_multiplicative(ExprPtr& out) {
  DUET_TRY(parse_power(out));
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const Pos at = here();
    const std::string& v = toks_[pos_++].value;
    const Op op = v == "*" ? Op::kMul : v == "/" ? Op::kDiv : v == "//" ? Op::kFloorDiv : Op::kMod;
    DUET_TRY(binary(out, op, at, &Parser::parse_power));
  }
  return {};
}

Status Parser::parse_power(ExprPtr& out) {
  DUET_TRY(parse_test(out));
  while (is_op("**")) {  // left-associative, as in Jinja2
    const Pos at = here();
    ++pos_;
    DUET_TRY(binary(out, Op::kPow, at, &Parser::parse_test));
  }
  return {};
}

Status Parser::parse_test(ExprPtr& out) {
  DUET_TRY(parse_filter(out));
  while (is_name("is")) {
    auto t = node(ExprKind::kTest, here());
    ++pos_;
    if (is_name("not")) {
      t->negate = true;
      ++pos_;
    }
    auto name = take_identifier("a test name");
    if (!name) return name.status();
    t->name = *name;
    t->a = std::move(out);
    if (is_op("(")) {
      DUET_TRY(parse_call_args(*t));
    } else if (test_takes_argument(t->name) && starts_primary()) {
      ExprPtr arg;
      DUET_TRY(parse_postfix_primary(arg));
      t->items.push_back(std::move(arg));
    }
    out = std::move(t);
  }
  return {};
}

bool Parser::starts_primary() const {
  const Token* t = peek();
  if (!t) return false;
  if (t->kind == Tok::kName)
    return t->value != "and" && t->value != "or" && t->value != "else" && t->value != "if" &&
           t->value != "not" && t->value != "is" && t->value != "in";
  if (t->kind == Tok::kString || t->kind == Tok::kInteger || t->kind == Tok::kFloat) return true;
  return is_op("(") || is_op("[") || is_op("{") || is_op("-");
}

Status Parser::parse_filter(ExprPtr& out) {
  DUET_TRY(parse_unary(out));
  while (is_op("|")) {
    auto f = node(ExprKind::kFilter, here());
    ++pos_;
    auto name = take_identifier("a filter name");
    if (!name) return name.status();
    f->name = *name;
    f->a = std::move(out);
    if (is_op("(")) DUET_TRY(parse_call_args(*f));
    out = std::move(f);
  }
  return {};
}

Status Parser::parse_unary(ExprPtr& out) {
  if (!is_op("-") && !is_op("+")) return parse_postfix_primary(out);
  NestingGuard guard(nesting_);
  DUET_TRY(check_nesting());
  auto u = node(ExprKind::kUnary, here());
  u->op = toks_[pos_++].value == "-" ? Op::kNeg : Op::kPos;
  DUET_TRY(parse_unary(u->a));
  out = std::move(u);
  return {};
}

// (args, name=value) into e.items / e.kwargs.
Status Parser::parse_call_args(Expr& e) {
  DUET_TRY(expect_op("("));
  while (!is_op(")")) {
    if (is_op("*") || is_op("**")) return error("argument unpacking (* and **) is not supported");
    if (is(Tok::kName) && is_op("=", 1)) {
      std::string key = toks_[pos_].value;
      pos_ += 2;
      for (const auto& [k, v] : e.kwargs)
        if (k == key) return error("keyword argument '" + key + "' given twice");
      ExprPtr v;
      DUET_TRY(parse_expression(v));
      e.kwargs.emplace_back(std::move(key), std::move(v));
    } else {
      if (!e.kwargs.empty()) return error("positional argument after a keyword argument");
      ExprPtr v;
      DUET_TRY(parse_expression(v));
      e.items.push_back(std::move(v));
    }
    if (!is_op(",")) break;
    ++pos_;
  }
  return expect_op(")");
}

Status Parser::parse_postfix_primary(ExprPtr& out) {
  DUET_TRY(parse_primary(out));
  while (true) {
    const Pos at = here();
    if (is_op(".")) {
      ++pos_;
      auto attr = node(ExprKind::kAttr, at);
      attr->a = std::move(out);
      if (is(Tok::kName)) {
        attr->name = toks_[pos_++].value;
      } else if (is(Tok::kInteger)) {  // x.0 is x[0]
        attr->kind = ExprKind::kIndex;
        attr->b = node(ExprKind::kLiteral, here());
        DUET_TRY(integer_literal(toks_[pos_].value, attr->b->literal));
        ++pos_;
      } else {
        return error("expected an attribute name after '.', found " + describe_next());
      }
      out = std::move(attr);
    } else if (is_op("[")) {
      ++pos_;
      DUET_TRY(parse_subscript(out, at));
    } else if (is_op("(")) {
      auto call = node(ExprKind::kCall, out->pos);  // errors point at the callee
      call->a = std::move(out);
      DUET_TRY(parse_call_args(*call));
      out = std::move(call);
    } else {
      return {};
    }
  }
}

Status Parser::parse_subscript(ExprPtr& object, Pos at) {
  NestingGuard guard(nesting_);
  DUET_TRY(check_nesting());
  std::vector<ExprPtr> parts(1);
  bool slice = false;
  while (!is_op("]")) {
    if (pos_ >= toks_.size()) return error("expected ']', found the end of the template");
    if (is_op(":")) {
      ++pos_;
      slice = true;
      if (parts.size() == 3) return error("a slice takes at most three parts");
      parts.emplace_back();
      continue;
    }
    if (parts.back()) return error("expected ']' or ':', found " + describe_next());
    DUET_TRY(parse_expression(parts.back()));
  }
  ++pos_;  // ]
  if (!slice) {
    if (!parts[0]) return error_at(at, "empty subscript []");
    auto index = node(ExprKind::kIndex, at);
    index->a = std::move(object);
    index->b = std::move(parts[0]);
    object = std::move(index);
    return {};
  }
  auto s = node(ExprKind::kSlice, at);
  s->a = std::move(object);
  parts.resize(3);
  s->items = std::move(parts);
  object = std::move(s);
  return {};
}

Status Parser::integer_literal(const std::string& digits, Value& out) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(digits.c_str(), &end, 10);
  if (errno == ERANGE) return error("integer literal " + digits + " is too large");
  out = Value::integer(v);
  return {};
}

Status Parser::parse_primary(ExprPtr& out) {
  const Pos at = here();
  const Token* t = peek();
  if (!t) return error("expected an expression, found the end of the template");
  switch (t->kind) {
    case Tok::kInteger:
      out = node(ExprKind::kLiteral, at);
      DUET_TRY(integer_literal(t->value, out->literal));
      ++pos_;
      return {};
    case Tok::kFloat:
      out = node(ExprKind::kLiteral, at);
      out->literal = Value::number(std::strtod(t->value.c_str(), nullptr));
      ++pos_;
      return {};
    case Tok::kString: {
      std::string s;
      while (is(Tok::kString)) s += toks_[pos_++].value;  // 'a' 'b' is 'ab'
      out = node(ExprKind::kLiteral, at);
      out->literal = Value::trusted_string(std::move(s));  // the template's own words
      return {};
    }
    case Tok::kName:
      return parse_name(out);
    case Tok::kOperator:
      break;
    default:
      return error("expected an expression, found " + describe_next());
  }
  NestingGuard guard(nesting_);
  DUET_TRY(check_nesting());
  if (is_op("(")) {
    ++pos_;
    if (is_op(")")) {
      ++pos_;
      out = node(ExprKind::kTuple, at);
      return {};
    }
    DUET_TRY(parse_expression_sequence(out));
    return expect_op(")");
  }
  if (is_op("[")) {
    ++pos_;
    out = node(ExprKind::kList, at);
    while (!is_op("]")) {
      ExprPtr e;
      DUET_TRY(parse_expression(e));
      out->items.push_back(std::move(e));
      if (!is_op(",")) break;
      ++pos_;
    }
    return expect_op("]");
  }
  if (is_op("{")) {
    ++pos_;
    out = node(ExprKind::kDict, at);
    while (!is_op("}")) {
      ExprPtr k, v;
      DUET_TRY(parse_expression(k));
      DUET_TRY(expect_op(":"));
      DUET_TRY(parse_expression(v));
      out->items.push_back(std::move(k));
      out->items.push_back(std::move(v));
      if (!is_op(",")) break;
      ++pos_;
    }
    return expect_op("}");
  }
  return error("expected an expression, found " + describe_next());
}

Status Parser::parse_name(ExprPtr& out) {
  const Pos at = here();
  const std::string& n = toks_[pos_].value;
  static const std::pair<const char*, int> kConstants[] = {
      {"true", 1}, {"True", 1}, {"false", 0}, {"False", 0}, {"none", -1}, {"None", -1}};
  for (const auto& [word, v] : kConstants) {
    if (n == word) {
      out = node(ExprKind::kLiteral, at);
      out->literal = v < 0 ? Value::none() : Value::boolean(v == 1);
      ++pos_;
      return {};
    }
  }
  static const char* kReserved[] = {"if", "else", "in", "and", "or", "not", "is"};
  for (const char* r : kReserved)
    if (n == r) return error("expected an expression, found '" + n + "'");
  if (!macros_.empty()) {
    if (n == "varargs") macros_.back()->uses_varargs = true;
    if (n == "kwargs") macros_.back()->uses_kwargs = true;
  }
  out = node(ExprKind::kName, at);
  out->name = n;
  ++pos_;
  return {};
}

}  // namespace duet::jinja
