// The parsed template: statements that write text, and the expressions they evaluate.
// Every node keeps where it began in the source, for error messages.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "text/template/jinja/jinja.h"
#include "text/template/jinja/lexer.h"
#include "text/template/jinja/value.h"

namespace duet::jinja {

// A byte offset into the template source; Program::map turns it into line and column
// when an error needs it.
struct Pos {
  uint32_t offset = 0;
};

enum class Op : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  kConcat,  // arithmetic, ~
  kEq,
  kNe,
  kLt,
  kGt,
  kLe,
  kGe,
  kIn,
  kNotIn,  // comparisons
  kAnd,
  kOr,  // short-circuit
  kNot,
  kNeg,
  kPos,  // unary
};
const char* op_name(Op op);

enum class ExprKind : uint8_t {
  kLiteral,  // literal
  kName,     // name
  kList,     // items
  kTuple,    // items
  kDict,     // items: key, value, key, value, ...
  kUnary,    // op a
  kBinary,   // a op b
  kTernary,  // a if b else c (c may be null: undefined when b is false)
  kFilter,   // a | name(args, kwargs)
  kTest,     // a is [not] name(args)
  kAttr,     // a.name
  kIndex,    // a[b]
  kSlice,    // a[items[0]:items[1]:items[2]] (null parts are omitted)
  kCall,     // a(args, kwargs)
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind;
  Pos pos;
  Op op = Op::kAdd;
  bool negate = false;  // kTest: `is not`
  Value literal;
  std::string name;
  ExprPtr a, b, c;
  std::vector<ExprPtr> items;                           // elements, or positional arguments
  std::vector<std::pair<std::string, ExprPtr>> kwargs;  // keyword arguments
};

enum class StmtKind : uint8_t {
  kText,      // text
  kOutput,    // {{ expr }}
  kIf,        // if expr: body else else_body (elif nests an If in else_body)
  kFor,       // for names in expr [if filter]: body else else_body
  kSet,       // set names = expr, or set object.attr = expr (object set)
  kSetBlock,  // set names[0] %}body{% endset
  kMacro,     // macro
  kBreak,
  kContinue,
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // may be null
};

struct MacroStmt {
  std::string name;
  Pos pos;
  std::vector<MacroParam> params;
  Body body;
  bool uses_varargs = false;  // the body reads `varargs` / `kwargs`, so extra arguments land there
  bool uses_kwargs = false;
};

struct Stmt {
  StmtKind kind;
  Pos pos;
  std::string text;
  ExprPtr expr;
  ExprPtr filter;                  // kFor: the `if` condition
  ExprPtr object;                  // kSet: the namespace in `set ns.attr = …`
  std::vector<std::string> names;  // loop variables / assigned names / the attribute
  Body body, else_body;
  std::unique_ptr<MacroStmt> macro;
};

struct Program {
  std::string source;
  std::unique_ptr<SourceMap> map;  // over `source`
  Body body;
  std::string where(Pos p) const { return map->where(p.offset); }
};

}  // namespace duet::jinja
