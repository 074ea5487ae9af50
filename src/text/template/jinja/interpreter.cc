#include "text/template/jinja/interpreter.h"

#include "text/template/jinja/text_util.h"

namespace duet::jinja {

const Value* Args::kw(std::string_view name) const {
  for (const auto& [k, v] : keyword)
    if (k == name) return &v;
  return nullptr;
}

const Value* Args::get(size_t i, std::string_view name) const {
  if (i < positional.size()) return &positional[i];
  return kw(name);
}

const Value* Scope::find(std::string_view name) const {
  for (const Scope* s = this; s != nullptr; s = s->parent)
    for (const auto& [k, v] : s->vars)
      if (k == name) return &v;
  return nullptr;
}

void Scope::set(const std::string& name, Value v) {
  for (auto& [k, old] : vars) {
    if (k == name) {
      old = std::move(v);
      return;
    }
  }
  vars.emplace_back(name, std::move(v));
}

namespace {

struct NestingGuard {
  int& n;
  explicit NestingGuard(int& counter) : n(counter) { ++n; }
  ~NestingGuard() { --n; }
};

}  // namespace

Interpreter::Interpreter(const Program& program, const RenderLimits& limits,
                         std::optional<DateTime> now)
    : program_(program), limits_(limits), now_(now) {}

Status Interpreter::error(Pos pos, const std::string& msg) const {
  return Status::error(program_.where(pos) + ": " + msg);
}

Status Interpreter::charge(uint64_t steps) {
  steps_ += steps;
  if (steps_ > limits_.max_steps)
    return Status::error("template stopped after " + std::to_string(limits_.max_steps) +
                         " evaluation steps (a runaway loop?)");
  return {};
}

Status Interpreter::check_size(size_t bytes) const {
  if (bytes > limits_.max_output_bytes)
    return Status::error("template built a string longer than " +
                         std::to_string(limits_.max_output_bytes) + " bytes");
  return {};
}

Status Interpreter::charge_string(size_t bytes) {
  DUET_TRY(check_size(bytes));
  return charge(bytes / 16);
}

Result<Value> Interpreter::new_list(std::vector<Value> items, Pos pos) {
  DUET_TRY(charge(items.size()));
  Value v = Value::list(std::move(items));
  if (v.depth() > kMaxValueDepth)
    return error(pos, "list nested more than " + std::to_string(kMaxValueDepth) + " deep");
  return v;
}

Result<Value> Interpreter::new_dict(Dict d, Pos pos) {
  DUET_TRY(charge(d.size()));
  Value v = Value::dict(std::move(d));
  if (v.depth() > kMaxValueDepth)
    return error(pos, "dict nested more than " + std::to_string(kMaxValueDepth) + " deep");
  return v;
}

Result<std::string> Interpreter::display_of(const Value& v, Pos pos) {
  auto s = display(v, limits_.max_output_bytes);
  if (!s) return error(pos, s.message());
  DUET_TRY(charge(s->size() / 16));
  return s;
}

Result<MarkedText> Interpreter::marked_display_of(const Value& v, Pos pos) {
  if (v.is_string()) {
    DUET_TRY(charge(v.str().size() / 16));
    return v.marked();
  }
  JINJA_ASSIGN(std::string s, display_of(v, pos));
  return MarkedText{std::move(s), {}};
}

bool Interpreter::equal(const Value& a, const Value& b) {
  uint64_t work = 0;
  const bool eq = values_equal(a, b, work);
  steps_ += work;  // checked at the next charge()
  return eq;
}

Result<MarkedText> Interpreter::render(const Value& context) {
  if (context.kind() != Kind::kDict) return Status::error("the template context must be an object");
  Scope globals;
  for (const char* name : {"range", "namespace", "raise_exception", "strftime_now"}) {
    Callable c;
    c.type = Callable::Type::kGlobal;
    c.name = name;
    globals.set(name, Value::callable(std::move(c)));
  }
  Scope top{&globals, {}};
  for (const auto& [k, v] : context.dict().entries()) top.set(k, v);
  MarkedText out;
  DUET_TRY(exec_body(program_.body, top, out));
  if (flow_ != Flow::kNormal) return Status::error("'break' or 'continue' outside a loop");
  return out;
}

// ---------------------------------------------------------------- statements

Status Interpreter::check_output(const MarkedText& out, size_t more, Pos pos) {
  if (out.text.size() + more > limits_.max_output_bytes)
    return error(pos,
                 "output is longer than " + std::to_string(limits_.max_output_bytes) + " bytes");
  return charge(more / 16);
}

Status Interpreter::emit_text(MarkedText& out, std::string_view text, Pos pos) {
  DUET_TRY(check_output(out, text.size(), pos));
  out.append_trusted(text);
  return {};
}

Status Interpreter::emit_value(MarkedText& out, const Value& v, Pos pos) {
  if (v.is_string()) {
    DUET_TRY(charge(v.str().size() / 16));  // as display_of would
    DUET_TRY(check_output(out, v.str().size(), pos));
    out.append(v.marked());
    return {};
  }
  JINJA_ASSIGN(std::string text, display_of(v, pos));
  DUET_TRY(check_output(out, text.size(), pos));
  out.append_client(text);
  return {};
}

Status Interpreter::exec_body(const Body& body, Scope& scope, MarkedText& out) {
  for (const StmtPtr& s : body) {
    DUET_TRY(exec(*s, scope, out));
    if (flow_ != Flow::kNormal) return {};
  }
  return {};
}

Status Interpreter::exec(const Stmt& s, Scope& scope, MarkedText& out) {
  NestingGuard guard(nesting_);
  if (nesting_ > kMaxEvalNesting) return error(s.pos, "template nests too deeply");
  DUET_TRY(charge(1));
  switch (s.kind) {
    case StmtKind::kText:
      return emit_text(out, s.text, s.pos);
    case StmtKind::kOutput: {
      JINJA_ASSIGN(Value v, eval(*s.expr, scope));
      return emit_value(out, v, s.expr->pos);
    }
    case StmtKind::kIf: {
      JINJA_ASSIGN(Value cond, eval(*s.expr, scope));
      return exec_body(truthy(cond) ? s.body : s.else_body, scope, out);
    }
    case StmtKind::kFor:
      return exec_for(s, scope, out);
    case StmtKind::kSet:
    case StmtKind::kSetBlock:
      return exec_set(s, scope, out);
    case StmtKind::kMacro: {
      Callable c;
      c.type = Callable::Type::kMacro;
      c.name = s.macro->name;
      c.macro = s.macro.get();
      scope.set(s.macro->name, Value::callable(std::move(c)));
      return {};
    }
    case StmtKind::kBreak:
      flow_ = Flow::kBreak;
      return {};
    case StmtKind::kContinue:
      flow_ = Flow::kContinue;
      return {};
  }
  return {};
}

Status Interpreter::assign(const std::vector<std::string>& names, const Value& v, Scope& scope,
                           Pos pos) {
  if (names.size() == 1) {
    scope.set(names[0], v);
    return {};
  }
  if (v.kind() != Kind::kList)
    return error(pos, std::string("cannot unpack ") + type_name(v) + " into " +
                          std::to_string(names.size()) + " names");
  const auto& items = v.list().items;
  if (items.size() != names.size())
    return error(pos, "cannot unpack " + std::to_string(items.size()) + " values into " +
                          std::to_string(names.size()) + " names");
  for (size_t i = 0; i < names.size(); ++i) scope.set(names[i], items[i]);
  return {};
}

Status Interpreter::exec_set(const Stmt& s, Scope& scope, MarkedText& out) {
  Value v;
  if (s.kind == StmtKind::kSetBlock) {
    MarkedText captured;
    DUET_TRY(exec_body(s.body, scope, captured));
    v = Value::string(std::move(captured));
  } else {
    JINJA_ASSIGN(v, eval(*s.expr, scope));
  }
  if (!s.object) return assign(s.names, v, scope, s.pos);
  JINJA_ASSIGN(Value target, eval(*s.object, scope));
  if (target.kind() != Kind::kNamespace)
    return error(s.pos, "cannot set an attribute of " + std::string(type_name(target)) + " '" +
                            s.object->name + "' (only of a namespace)");
  // A namespace never holds a namespace, so namespaces cannot form cycles.
  if (v.has_namespace()) return error(s.pos, "a namespace attribute cannot hold a namespace");
  if (v.depth() + 1 > kMaxValueDepth) return error(s.pos, "value nested too deeply");
  target.ns().attrs.set(s.names[0], std::move(v));
  return {};
}

Status Interpreter::exec_for(const Stmt& s, Scope& scope, MarkedText& out) {
  JINJA_ASSIGN(Value seq, eval(*s.expr, scope));
  std::vector<Value> items;
  switch (seq.kind()) {
    case Kind::kList:
      items = seq.list().items;
      break;
    case Kind::kDict:
      for (const auto& [k, v] : seq.dict().entries()) items.push_back(Value::string(k));
      break;
    case Kind::kString: {
      const std::string& str = seq.str();
      for (size_t i = 0; i < str.size();) {
        const size_t start = i;
        decode_utf8(str, i);
        items.push_back(substring(seq, start, i));
      }
      break;
    }
    case Kind::kUndefined:
      break;  // Jinja2 iterates undefined as empty
    default:
      return error(s.expr->pos, std::string("cannot loop over ") + type_name(seq));
  }
  DUET_TRY(charge(items.size()));
  Scope loop_scope{&scope, {}};
  if (s.filter) {
    std::vector<Value> kept;
    for (const Value& item : items) {
      DUET_TRY(assign(s.names, item, loop_scope, s.pos));
      JINJA_ASSIGN(Value keep, eval(*s.filter, loop_scope));
      if (truthy(keep)) kept.push_back(item);
    }
    items = std::move(kept);
  }
  const size_t n = items.size();
  for (size_t i = 0; i < n; ++i) {
    DUET_TRY(charge(1));
    Dict loop;
    loop.reserve(9);
    const auto ii = static_cast<int64_t>(i), nn = static_cast<int64_t>(n);
    loop.add_new("index", Value::integer(ii + 1));
    loop.add_new("index0", Value::integer(ii));
    loop.add_new("revindex", Value::integer(nn - ii));
    loop.add_new("revindex0", Value::integer(nn - ii - 1));
    loop.add_new("first", Value::boolean(i == 0));
    loop.add_new("last", Value::boolean(i + 1 == n));
    loop.add_new("length", Value::integer(nn));
    loop.add_new("previtem", i > 0 ? items[i - 1] : Value());
    loop.add_new("nextitem", i + 1 < n ? items[i + 1] : Value());
    loop_scope.set("loop", Value::dict(std::move(loop)));
    DUET_TRY(assign(s.names, items[i], loop_scope, s.pos));
    DUET_TRY(exec_body(s.body, loop_scope, out));
    if (flow_ == Flow::kBreak) {
      flow_ = Flow::kNormal;
      break;
    }
    flow_ = Flow::kNormal;
  }
  if (n == 0) return exec_body(s.else_body, loop_scope, out);
  return {};
}

// ---------------------------------------------------------------- expressions

Result<Value> Interpreter::eval(const Expr& e, Scope& scope) {
  NestingGuard guard(nesting_);
  if (nesting_ > kMaxEvalNesting) return error(e.pos, "template nests too deeply");
  DUET_TRY(charge(1));
  return eval_inner(e, scope);
}

Result<Value> Interpreter::eval_inner(const Expr& e, Scope& scope) {
  switch (e.kind) {
    case ExprKind::kLiteral:
      return e.literal;
    case ExprKind::kName: {
      const Value* v = scope.find(e.name);
      return v ? *v : Value();
    }
    case ExprKind::kList:
    case ExprKind::kTuple: {
      std::vector<Value> items;
      items.reserve(e.items.size());
      for (const ExprPtr& x : e.items) {
        JINJA_ASSIGN(Value v, eval(*x, scope));
        items.push_back(std::move(v));
      }
      return new_list(std::move(items), e.pos);
    }
    case ExprKind::kDict: {
      Dict d;
      for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
        JINJA_ASSIGN(Value k, eval(*e.items[i], scope));
        if (!k.is_string())
          return error(e.items[i]->pos,
                       std::string("dict keys must be strings, not ") + type_name(k));
        JINJA_ASSIGN(Value v, eval(*e.items[i + 1], scope));
        d.set(k.str(), std::move(v));
      }
      return new_dict(std::move(d), e.pos);
    }
    case ExprKind::kUnary: {
      JINJA_ASSIGN(Value v, eval(*e.a, scope));
      if (e.op == Op::kNot) return Value::boolean(!truthy(v));
      const bool neg = e.op == Op::kNeg;
      switch (v.kind()) {
        case Kind::kInt:
          if (neg && v.as_int() == INT64_MIN) return error(e.pos, "integer overflow");
          return Value::integer(neg ? -v.as_int() : v.as_int());
        case Kind::kBool:
          return Value::integer(neg ? -int64_t{v.as_bool()} : int64_t{v.as_bool()});
        case Kind::kFloat:
          return Value::number(neg ? -v.as_float() : v.as_float());
        default:
          return error(e.pos, std::string("unary ") + op_name(e.op) + " needs a number, not " +
                                  type_name(v));
      }
    }
    case ExprKind::kBinary:
      return eval_binary(e, scope);
    case ExprKind::kTernary: {
      JINJA_ASSIGN(Value cond, eval(*e.b, scope));
      if (truthy(cond)) return eval(*e.a, scope);
      if (e.c) return eval(*e.c, scope);
      return Value();
    }
    case ExprKind::kFilter: {
      JINJA_ASSIGN(Value operand, eval(*e.a, scope));
      JINJA_ASSIGN(Args args, eval_args(e, scope));
      return apply_filter(e.name, operand, args, scope, e.pos);
    }
    case ExprKind::kTest: {
      JINJA_ASSIGN(Value operand, eval(*e.a, scope));
      JINJA_ASSIGN(Args args, eval_args(e, scope));
      JINJA_ASSIGN(bool r, apply_test(e.name, operand, args, e.pos));
      return Value::boolean(e.negate ? !r : r);
    }
    case ExprKind::kAttr: {
      JINJA_ASSIGN(Value object, eval(*e.a, scope));
      return get_attr(object, e.name);
    }
    case ExprKind::kIndex: {
      JINJA_ASSIGN(Value object, eval(*e.a, scope));
      JINJA_ASSIGN(Value key, eval(*e.b, scope));
      return get_item(object, key, e.pos);
    }
    case ExprKind::kSlice: {
      JINJA_ASSIGN(Value object, eval(*e.a, scope));
      return slice(object, e, scope);
    }
    case ExprKind::kCall:
      return eval_call(e, scope);
  }
  return Value();
}

namespace {

// `message.content`, `xs[0]`: how an operand was written, for error messages.
std::string describe(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kName:
      return e.name;
    case ExprKind::kAttr:
      return describe(*e.a) + "." + e.name;
    case ExprKind::kIndex:
      if (e.b->kind == ExprKind::kLiteral && e.b->literal.is_string())
        return describe(*e.a) + "['" + e.b->literal.str() + "']";
      if (e.b->kind == ExprKind::kLiteral && e.b->literal.kind() == Kind::kInt)
        return describe(*e.a) + "[" + std::to_string(e.b->literal.as_int()) + "]";
      return describe(*e.a) + "[…]";
    default:
      return "";
  }
}

bool is_arithmetic(Op op) {
  return op == Op::kAdd || op == Op::kSub || op == Op::kMul || op == Op::kDiv ||
         op == Op::kFloorDiv || op == Op::kMod || op == Op::kPow;
}

}  // namespace

Result<Value> Interpreter::eval_binary(const Expr& e, Scope& scope) {
  JINJA_ASSIGN(Value a, eval(*e.a, scope));
  if (e.op == Op::kAnd) return truthy(a) ? eval(*e.b, scope) : Result<Value>(a);
  if (e.op == Op::kOr) return truthy(a) ? Result<Value>(a) : eval(*e.b, scope);
  JINJA_ASSIGN(Value b, eval(*e.b, scope));
  if (is_arithmetic(e.op)) {
    for (const auto& [v, x] :
         {std::pair<const Value*, const Expr*>{&a, e.a.get()}, {&b, e.b.get()}}) {
      const std::string name = describe(*x);
      if ((v->is_undefined() || v->is_none()) && !name.empty())
        return error(e.pos, std::string("cannot apply ") + op_name(e.op) + ": '" + name + "' is " +
                                (v->is_undefined() ? "undefined" : "none"));
    }
  }
  return binary_op(*this, e.op, a, b, e.pos);
}

Result<Args> Interpreter::eval_args(const Expr& e, Scope& scope) {
  Args args;
  for (const ExprPtr& x : e.items) {
    JINJA_ASSIGN(Value v, eval(*x, scope));
    args.positional.push_back(std::move(v));
  }
  for (const auto& [k, x] : e.kwargs) {
    JINJA_ASSIGN(Value v, eval(*x, scope));
    args.keyword.emplace_back(k, std::move(v));
  }
  return args;
}

Value Interpreter::get_attr(const Value& object, const std::string& name) {
  switch (object.kind()) {
    case Kind::kDict:
      if (const Value* v = object.dict().find(name)) return *v;
      break;
    case Kind::kNamespace:
      if (const Value* v = object.ns().attrs.find(name)) return *v;
      return Value();
    case Kind::kString:
      if (name == "length") {
        steps_ += object.str().size() / 16;
        return Value::integer(static_cast<int64_t>(count_code_points(object.str())));
      }
      break;
    case Kind::kList:
      if (name == "length") return Value::integer(static_cast<int64_t>(object.list().items.size()));
      break;
    default:
      return Value();
  }
  if (!has_method(object, name)) return Value();
  Callable c;
  c.type = Callable::Type::kMethod;
  c.name = name;
  c.self = std::make_shared<const Value>(object);
  return Value::callable(std::move(c));
}

Result<Value> Interpreter::get_item(const Value& object, const Value& key, Pos pos) {
  if (key.is_string()) return get_attr(object, key.str());
  if (object.kind() != Kind::kList && object.kind() != Kind::kString) return Value();
  if (key.kind() != Kind::kInt)
    return error(pos, std::string("an index must be an integer, not ") + type_name(key));
  int64_t i = key.as_int();
  if (object.kind() == Kind::kList) {
    const auto& items = object.list().items;
    const auto n = static_cast<int64_t>(items.size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) return Value();
    return items[static_cast<size_t>(i)];
  }
  const std::string& s = object.str();
  DUET_TRY(charge(s.size() / 16));
  const std::vector<size_t> offsets = code_point_offsets(s);
  const auto n = static_cast<int64_t>(offsets.size()) - 1;
  if (i < 0) i += n;
  if (i < 0 || i >= n) return Value();
  const auto at = static_cast<size_t>(i);
  return substring(object, offsets[at], offsets[at + 1]);
}

Result<Value> Interpreter::slice(const Value& object, const Expr& e, Scope& scope) {
  int64_t parts[3] = {0, 0, 1};
  bool given[3] = {false, false, false};
  for (int k = 0; k < 3; ++k) {
    if (!e.items[k]) continue;
    JINJA_ASSIGN(Value v, eval(*e.items[k], scope));
    if (v.is_none() || v.is_undefined()) continue;
    if (v.kind() != Kind::kInt)
      return error(e.pos, std::string("slice bounds must be integers, not ") + type_name(v));
    parts[k] = v.as_int();
    given[k] = true;
  }
  const int64_t step = parts[2];
  if (step == 0) return error(e.pos, "slice step cannot be zero");
  std::vector<size_t> offsets;
  int64_t n = 0;
  if (object.kind() == Kind::kList) {
    n = static_cast<int64_t>(object.list().items.size());
  } else if (object.is_string()) {
    DUET_TRY(charge(object.str().size() / 16));
    offsets = code_point_offsets(object.str());
    n = static_cast<int64_t>(offsets.size()) - 1;
  } else {
    return error(e.pos, std::string("cannot slice ") + type_name(object));
  }
  // Python's slice.indices().
  auto clamp = [&](int64_t v, bool is_given, int64_t fallback) {
    if (!is_given) return fallback;
    if (v < 0) v += n;
    if (step > 0) return v < 0 ? 0 : (v > n ? n : v);
    return v < 0 ? -1 : (v >= n ? n - 1 : v);
  };
  const int64_t start = clamp(parts[0], given[0], step > 0 ? 0 : n - 1);
  const int64_t stop = clamp(parts[1], given[1], step > 0 ? n : -1);
  std::vector<int64_t> picks;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) picks.push_back(i);
  DUET_TRY(charge(picks.size()));
  if (object.kind() == Kind::kList) {
    std::vector<Value> out;
    out.reserve(picks.size());
    for (int64_t i : picks) out.push_back(object.list().items[static_cast<size_t>(i)]);
    return new_list(std::move(out), e.pos);
  }
  MarkedText out;
  for (int64_t i : picks) {
    const auto at = static_cast<size_t>(i);
    out.append(object.marked(), offsets[at], offsets[at + 1]);
  }
  return Value::string(std::move(out));
}

Result<Value> Interpreter::eval_call(const Expr& e, Scope& scope) {
  JINJA_ASSIGN(Args args, eval_args(e, scope));
  if (e.a->kind == ExprKind::kAttr) {
    // obj.name(...): a dict key or namespace attribute if there is one, else a method.
    JINJA_ASSIGN(Value self, eval(*e.a->a, scope));
    const std::string& name = e.a->name;
    const Value* member = nullptr;
    if (self.kind() == Kind::kDict) member = self.dict().find(name);
    if (self.kind() == Kind::kNamespace) member = self.ns().attrs.find(name);
    if (member) return call(*member, args, scope, e.pos);
    if (has_method(self, name)) return call_method(*this, self, name, args, e.pos);
    if (self.is_undefined()) {
      const std::string object = describe(*e.a->a);
      return error(e.pos, "cannot call '" + name + "()' on " +
                              (object.empty() ? "an undefined value"
                                              : "'" + object + "', which is undefined"));
    }
    return error(e.pos, std::string(type_name(self)) + " has no method '" + name + "'");
  }
  JINJA_ASSIGN(Value callee, eval(*e.a, scope));
  if (callee.is_undefined() && e.a->kind == ExprKind::kName)
    return error(e.pos, "'" + e.a->name + "' is undefined: no such macro or function");
  return call(callee, args, scope, e.pos);
}

Result<Value> Interpreter::call(const Value& callee, const Args& args, Scope& scope, Pos pos) {
  if (callee.kind() != Kind::kCallable)
    return error(pos, std::string("cannot call ") + type_name(callee) + " (not a function)");
  const Callable& c = callee.callable();
  switch (c.type) {
    case Callable::Type::kMacro:
      return call_macro(*c.macro, args, scope, pos);
    case Callable::Type::kMethod:
      return call_method(*this, *c.self, c.name, args, pos);
    case Callable::Type::kGlobal:
      return call_global(*this, c.name, args, pos);
  }
  return Value();
}

Result<Value> Interpreter::call_macro(const MacroStmt& m, const Args& args, Scope& caller,
                                      Pos pos) {
  if (macro_depth_ >= limits_.max_depth)
    return error(pos, "macro calls nested deeper than " + std::to_string(limits_.max_depth) +
                          " (runaway recursion in '" + m.name + "'?)");
  // Macros see the caller's variables (as @huggingface/jinja does), plus their parameters.
  Scope local{&caller, {}};
  std::vector<const MacroParam*> pending_defaults;
  std::vector<bool> used_kw(args.keyword.size(), false);
  for (size_t i = 0; i < m.params.size(); ++i) {
    const MacroParam& p = m.params[i];
    const Value* v = i < args.positional.size() ? &args.positional[i] : nullptr;
    if (!v) {
      for (size_t k = 0; k < args.keyword.size(); ++k) {
        if (args.keyword[k].first == p.name) {
          v = &args.keyword[k].second;
          used_kw[k] = true;
        }
      }
    }
    if (!v && p.default_value) pending_defaults.push_back(&p);
    local.set(p.name, v ? *v : Value());
  }
  Dict extra_kw;
  for (size_t k = 0; k < args.keyword.size(); ++k)
    if (!used_kw[k]) extra_kw.set(args.keyword[k].first, args.keyword[k].second);
  if (m.uses_kwargs) {
    JINJA_ASSIGN(Value kw, new_dict(std::move(extra_kw), pos));
    local.set("kwargs", std::move(kw));
  } else if (extra_kw.size() > 0) {
    return error(pos,
                 "macro '" + m.name + "' has no parameter '" + extra_kw.entries()[0].first + "'");
  }
  if (m.uses_varargs) {
    std::vector<Value> rest;
    for (size_t i = m.params.size(); i < args.positional.size(); ++i)
      rest.push_back(args.positional[i]);
    JINJA_ASSIGN(Value va, new_list(std::move(rest), pos));
    local.set("varargs", std::move(va));
  } else if (args.positional.size() > m.params.size()) {
    return error(pos, "macro '" + m.name + "' takes at most " + std::to_string(m.params.size()) +
                          " arguments, got " + std::to_string(args.positional.size()));
  }
  ++macro_depth_;
  struct DepthGuard {
    int& d;
    ~DepthGuard() { --d; }
  } depth_guard{macro_depth_};
  for (const MacroParam* p : pending_defaults) {
    JINJA_ASSIGN(Value v, eval(*p->default_value, local));
    local.set(p->name, std::move(v));
  }
  MarkedText out;
  DUET_TRY(exec_body(m.body, local, out));
  if (flow_ != Flow::kNormal) return error(m.pos, "'break' or 'continue' outside a loop");
  return Value::string(std::move(out));
}

}  // namespace duet::jinja
