// Tests (`x is name`). The type tests follow @huggingface/jinja: a bool is not a number,
// a dict is a sequence. `iterable` also accepts a dict, and `float` exists, as in Jinja2.
#include "text/template/jinja/interpreter.h"
#include "text/template/jinja/text_util.h"

namespace duet::jinja {

Result<bool> Interpreter::apply_test(const std::string& name, const Value& v, const Args& args,
                                     Pos pos) {
  const Kind k = v.kind();
  if (name == "defined") return k != Kind::kUndefined;
  if (name == "undefined") return k == Kind::kUndefined;
  if (name == "none") return k == Kind::kNone;
  if (name == "boolean") return k == Kind::kBool;
  if (name == "true") return k == Kind::kBool && v.as_bool();
  if (name == "false") return k == Kind::kBool && !v.as_bool();
  if (name == "string") return k == Kind::kString;
  if (name == "number") return k == Kind::kInt || k == Kind::kFloat;
  if (name == "integer") return k == Kind::kInt;
  if (name == "float") return k == Kind::kFloat;
  if (name == "mapping") return k == Kind::kDict;
  if (name == "iterable") return k == Kind::kList || k == Kind::kString || k == Kind::kDict;
  if (name == "sequence") return k == Kind::kList || k == Kind::kString || k == Kind::kDict;
  if (name == "callable") return k == Kind::kCallable;
  if (name == "lower" || name == "upper") {
    if (k != Kind::kString) return false;
    return v.str() == (name == "lower" ? ascii_lower(v.str()) : ascii_upper(v.str()));
  }
  if (name == "odd" || name == "even" || name == "divisibleby") {
    if (k != Kind::kInt) return error(pos, "'" + name + "' needs an integer, not " + type_name(v));
    if (name == "odd") return v.as_int() % 2 != 0;
    if (name == "even") return v.as_int() % 2 == 0;
    const Value* d = args.get(0, "num");
    if (!d || d->kind() != Kind::kInt) return error(pos, "'divisibleby' needs an integer argument");
    if (d->as_int() == 0) return error(pos, "divisibleby 0");
    return d->as_int() == -1 || v.as_int() % d->as_int() == 0;
  }
  const Value undefined;
  const Value* other = args.get(0, "b");
  if (!other) other = &undefined;
  if (name == "equalto" || name == "eq" || name == "sameas") {
    const bool r = equal(v, *other);
    DUET_TRY(charge(0));
    return r;
  }
  if (name == "ne") {
    const bool r = equal(v, *other);
    DUET_TRY(charge(0));
    return !r;
  }
  if (name == "in") {
    JINJA_ASSIGN(Value r, binary_op(*this, Op::kIn, v, *other, pos));
    return r.as_bool();
  }
  static const std::pair<const char*, Op> kComparisons[] = {
      {"lt", Op::kLt},          {"lessthan", Op::kLt}, {"gt", Op::kGt},
      {"greaterthan", Op::kGt}, {"le", Op::kLe},       {"ge", Op::kGe}};
  for (const auto& [test, op] : kComparisons) {
    if (name == test) {
      JINJA_ASSIGN(Value r, binary_op(*this, op, v, *other, pos));
      return r.as_bool();
    }
  }
  return error(pos, "unknown test '" + name + "'");
}

}  // namespace duet::jinja
