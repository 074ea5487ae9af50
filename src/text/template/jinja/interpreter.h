// Walks a Program over a context and writes the text. Internal to the template engine;
// the built-in filters, tests, methods and global functions (builtins_*.cc) call back
// into it for budgets, container construction and macro calls.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "text/template/jinja/ast.h"
#include "text/template/jinja/value.h"

namespace duet::jinja {

// Result<Value> plumbing: `JINJA_ASSIGN(Value v, expr);` returns the status on error.
#define JINJA_CONCAT_INNER(a, b) a##b
#define JINJA_CONCAT(a, b) JINJA_CONCAT_INNER(a, b)
#define JINJA_ASSIGN(lhs, expr) JINJA_ASSIGN_IMPL(JINJA_CONCAT(jinja_r_, __LINE__), lhs, expr)
#define JINJA_ASSIGN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                      \
  if (!tmp.is_ok()) return tmp.status();  \
  lhs = std::move(tmp.value())

// Nested evaluation (expressions within statements within macro calls) beyond this
// fails, whatever the macro depth limit says: it bounds the native stack.
constexpr int kMaxEvalNesting = 2000;

struct Args {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;

  const Value* kw(std::string_view name) const;
  // The i-th positional argument, else the keyword argument `name`, else null.
  const Value* get(size_t i, std::string_view name) const;
};

// One level of variables. Lookups walk to the parent; assignments stay here.
struct Scope {
  Scope* parent = nullptr;
  std::vector<std::pair<std::string, Value>> vars;

  const Value* find(std::string_view name) const;
  void set(const std::string& name, Value v);
};

class Interpreter {
 public:
  Interpreter(const Program& program, const RenderLimits& limits, std::optional<DateTime> now);

  // The output, with the byte ranges the template wrote (its text, its literals, trusted
  // context values) marked trusted.
  Result<MarkedText> render(const Value& context);

  // ---- for the built-ins
  const RenderLimits& limits() const { return limits_; }
  const std::optional<DateTime>& now() const { return now_; }
  Status error(Pos pos, const std::string& msg) const;
  // Counts work against the step budget.
  Status charge(uint64_t steps);
  // A string about to be built: its size is within the limit, and its bytes are paid for.
  Status charge_string(size_t bytes);
  // Only the size check, for strings grown piece by piece (pay once at the end).
  Status check_size(size_t bytes) const;
  Result<Value> new_list(std::vector<Value> items, Pos pos);
  Result<Value> new_dict(Dict d, Pos pos);
  // What `{{ v }}` prints, paid for like any string built.
  Result<std::string> display_of(const Value& v, Pos pos);
  // The same with provenance: a string keeps its own; anything else printed (numbers,
  // containers as JSON) is client text.
  Result<MarkedText> marked_display_of(const Value& v, Pos pos);
  bool equal(const Value& a, const Value& b);  // charges the comparison
  Result<Value> call(const Value& callee, const Args& args, Scope& scope, Pos pos);
  Result<Value> apply_filter(const std::string& name, const Value& operand, const Args& args,
                             Scope& scope, Pos pos);
  Result<bool> apply_test(const std::string& name, const Value& operand, const Args& args, Pos pos);
  // Dict key, namespace attribute, `length`, or a bound method; else undefined. Work
  // done here is counted and checked at the next charge().
  Value get_attr(const Value& object, const std::string& name);

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Status exec_body(const Body& body, Scope& scope, MarkedText& out);
  Status exec(const Stmt& s, Scope& scope, MarkedText& out);
  Status exec_for(const Stmt& s, Scope& scope, MarkedText& out);
  Status exec_set(const Stmt& s, Scope& scope, MarkedText& out);
  // Template text (trusted), and what `{{ v }}` writes.
  Status emit_text(MarkedText& out, std::string_view text, Pos pos);
  Status emit_value(MarkedText& out, const Value& v, Pos pos);
  Status check_output(const MarkedText& out, size_t more, Pos pos);
  Status assign(const std::vector<std::string>& names, const Value& v, Scope& scope, Pos pos);

  Result<Value> eval(const Expr& e, Scope& scope);
  Result<Value> eval_inner(const Expr& e, Scope& scope);
  Result<Value> eval_binary(const Expr& e, Scope& scope);
  Result<Value> eval_call(const Expr& e, Scope& scope);
  Result<Args> eval_args(const Expr& e, Scope& scope);
  Result<Value> get_item(const Value& object, const Value& key, Pos pos);
  Result<Value> slice(const Value& object, const Expr& e, Scope& scope);
  Result<Value> call_macro(const MacroStmt& m, const Args& args, Scope& caller, Pos pos);

  const Program& program_;
  RenderLimits limits_;
  std::optional<DateTime> now_;
  uint64_t steps_ = 0;
  int macro_depth_ = 0;
  int nesting_ = 0;
  Flow flow_ = Flow::kNormal;
};

// builtins_*.cc
Result<Value> call_global(Interpreter& in, const std::string& name, const Args& args, Pos pos);
bool is_global_function(std::string_view name);
Result<Value> call_method(Interpreter& in, const Value& self, const std::string& name,
                          const Args& args, Pos pos);
bool has_method(const Value& self, std::string_view name);
// Binary operators other than and/or (arithmetic, comparison, membership, ~).
Result<Value> binary_op(Interpreter& in, Op op, const Value& a, const Value& b, Pos pos);

}  // namespace duet::jinja
