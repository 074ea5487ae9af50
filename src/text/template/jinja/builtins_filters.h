// Filters over sequences (builtins_sequences.cc), called by Interpreter::apply_filter
// for every filter name it does not handle itself.
#pragma once

#include <string>

#include "text/template/jinja/interpreter.h"

namespace duet::jinja {

Result<Value> sequence_filter(Interpreter& in, const std::string& name, const Value& v,
                              const Args& args, Scope& scope, Pos pos);

}  // namespace duet::jinja
