// Binary operators. Numbers follow Python (floor division and modulo round toward −∞,
// integer overflow is an error rather than a silent float); `+` also joins lists and, as
// in @huggingface/jinja, concatenates when either side is a string.
#include <algorithm>
#include <cmath>
#include <limits>

#include "text/template/jinja/interpreter.h"

namespace duet::jinja {
namespace {

bool numeric(const Value& v) { return v.is_number() || v.kind() == Kind::kBool; }
bool integral(const Value& v) { return v.kind() == Kind::kInt || v.kind() == Kind::kBool; }
int64_t int_of(const Value& v) {
  return v.kind() == Kind::kBool ? int64_t{v.as_bool()} : v.as_int();
}

Result<Value> checked_float(Interpreter& in, double d, Pos pos) {
  if (!std::isfinite(d)) return in.error(pos, "arithmetic result is not a finite number");
  return Value::number(d);
}

Result<Value> int_power(Interpreter& in, int64_t base, int64_t exp, Pos pos) {
  int64_t result = 1;
  for (int64_t e = exp, b = base; e > 0; e >>= 1) {
    if ((e & 1) && __builtin_mul_overflow(result, b, &result))
      return in.error(pos, "integer overflow in **");
    if (e > 1 && __builtin_mul_overflow(b, b, &b)) return in.error(pos, "integer overflow in **");
  }
  return Value::integer(result);
}

Result<Value> arithmetic(Interpreter& in, Op op, const Value& a, const Value& b, Pos pos) {
  if (integral(a) && integral(b)) {
    const int64_t x = int_of(a), y = int_of(b);
    int64_t r = 0;
    switch (op) {
      case Op::kAdd:
        if (__builtin_add_overflow(x, y, &r)) return in.error(pos, "integer overflow in +");
        return Value::integer(r);
      case Op::kSub:
        if (__builtin_sub_overflow(x, y, &r)) return in.error(pos, "integer overflow in -");
        return Value::integer(r);
      case Op::kMul:
        if (__builtin_mul_overflow(x, y, &r)) return in.error(pos, "integer overflow in *");
        return Value::integer(r);
      case Op::kDiv:
        if (y == 0) return in.error(pos, "division by zero");
        return Value::number(static_cast<double>(x) / static_cast<double>(y));
      case Op::kFloorDiv:
      case Op::kMod: {
        if (y == 0) return in.error(pos, op == Op::kMod ? "modulo by zero" : "division by zero");
        if (x == INT64_MIN && y == -1) {
          if (op == Op::kMod) return Value::integer(0);
          return in.error(pos, "integer overflow in //");
        }
        int64_t q = x / y, m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
          --q;
          m += y;
        }
        return Value::integer(op == Op::kMod ? m : q);
      }
      case Op::kPow:
        if (y >= 0) return int_power(in, x, y, pos);
        if (x == 0) return in.error(pos, "0 cannot be raised to a negative power");
        return checked_float(in, std::pow(static_cast<double>(x), static_cast<double>(y)), pos);
      default:
        break;
    }
  }
  const double x = a.as_double(), y = b.as_double();
  switch (op) {
    case Op::kAdd:
      return checked_float(in, x + y, pos);
    case Op::kSub:
      return checked_float(in, x - y, pos);
    case Op::kMul:
      return checked_float(in, x * y, pos);
    case Op::kDiv:
      if (y == 0) return in.error(pos, "division by zero");
      return checked_float(in, x / y, pos);
    case Op::kFloorDiv:
      if (y == 0) return in.error(pos, "division by zero");
      return checked_float(in, std::floor(x / y), pos);
    case Op::kMod: {
      if (y == 0) return in.error(pos, "modulo by zero");
      double m = std::fmod(x, y);
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      return checked_float(in, m, pos);
    }
    case Op::kPow:
      if (x == 0 && y < 0) return in.error(pos, "0 cannot be raised to a negative power");
      return checked_float(in, std::pow(x, y), pos);
    default:
      break;
  }
  return in.error(pos, "bad arithmetic operator");
}

Result<Value> compare(Interpreter& in, Op op, const Value& a, const Value& b, Pos pos) {
  int c = 0;
  if (numeric(a) && numeric(b)) {
    if (integral(a) && integral(b)) {
      c = int_of(a) < int_of(b) ? -1 : int_of(a) > int_of(b) ? 1 : 0;
    } else {
      const double x = a.as_double(), y = b.as_double();
      if (std::isnan(x) || std::isnan(y)) return Value::boolean(false);
      c = x < y ? -1 : x > y ? 1 : 0;
    }
  } else if (a.is_string() && b.is_string()) {
    DUET_TRY(in.charge(std::min(a.str().size(), b.str().size()) / 16));
    c = a.str().compare(b.str());  // bytes: the same order as code points
  } else {
    return in.error(pos, std::string("cannot compare ") + type_name(a) + " and " + type_name(b) +
                             " with " + op_name(op));
  }
  switch (op) {
    case Op::kLt:
      return Value::boolean(c < 0);
    case Op::kGt:
      return Value::boolean(c > 0);
    case Op::kLe:
      return Value::boolean(c <= 0);
    default:
      return Value::boolean(c >= 0);
  }
}

Result<Value> membership(Interpreter& in, const Value& a, const Value& b, Pos pos) {
  switch (b.kind()) {
    case Kind::kUndefined:
      return Value::boolean(false);
    case Kind::kList:
      for (const Value& item : b.list().items)
        if (in.equal(a, item)) return Value::boolean(true);
      DUET_TRY(in.charge(0));
      return Value::boolean(false);
    case Kind::kDict:
      return Value::boolean(a.is_string() && b.dict().find(a.str()) != nullptr);
    case Kind::kString:
      if (!a.is_string())
        return in.error(
            pos, std::string("'in <string>' needs a string on the left, not ") + type_name(a));
      DUET_TRY(in.charge(b.str().size() / 16));
      return Value::boolean(b.str().find(a.str()) != std::string::npos);
    default:
      return in.error(
          pos, std::string("'in' needs a list, dict or string on the right, not ") + type_name(b));
  }
}

// Each side keeps its provenance: '<|im_start|>' + message.role stays a trusted token
// followed by client text.
Result<Value> concat(Interpreter& in, const Value& a, const Value& b, Pos pos) {
  JINJA_ASSIGN(MarkedText x, in.marked_display_of(a, pos));
  JINJA_ASSIGN(MarkedText y, in.marked_display_of(b, pos));
  DUET_TRY(in.charge_string(x.text.size() + y.text.size()));
  x.append(y);
  return Value::string(std::move(x));
}

}  // namespace

Result<Value> binary_op(Interpreter& in, Op op, const Value& a, const Value& b, Pos pos) {
  switch (op) {
    case Op::kEq: {
      const bool eq = in.equal(a, b);
      DUET_TRY(in.charge(0));
      return Value::boolean(eq);
    }
    case Op::kNe: {
      const bool eq = in.equal(a, b);
      DUET_TRY(in.charge(0));
      return Value::boolean(!eq);
    }
    case Op::kIn:
    case Op::kNotIn: {
      JINJA_ASSIGN(Value r, membership(in, a, b, pos));
      return op == Op::kIn ? r : Value::boolean(!r.as_bool());
    }
    case Op::kConcat:
      return concat(in, a, b, pos);
    case Op::kLt:
    case Op::kGt:
    case Op::kLe:
    case Op::kGe:
      return compare(in, op, a, b, pos);
    default:
      break;
  }
  const auto undefined_or_none = [](const Value& v) { return v.is_undefined() || v.is_none(); };
  if (undefined_or_none(a) || undefined_or_none(b))
    return in.error(pos, std::string("cannot apply ") + op_name(op) + " to " + type_name(a) +
                             " and " + type_name(b));
  if (numeric(a) && numeric(b)) return arithmetic(in, op, a, b, pos);
  if (op == Op::kAdd) {
    if (a.kind() == Kind::kList && b.kind() == Kind::kList) {
      std::vector<Value> items = a.list().items;
      items.insert(items.end(), b.list().items.begin(), b.list().items.end());
      return in.new_list(std::move(items), pos);
    }
    if (a.is_string() || b.is_string()) return concat(in, a, b, pos);
  }
  return in.error(pos, std::string("cannot apply ") + op_name(op) + " to " + type_name(a) +
                           " and " + type_name(b));
}

}  // namespace duet::jinja
