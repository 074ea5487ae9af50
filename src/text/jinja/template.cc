// Template: the public face of the engine (jinja.h) over parser and interpreter.
#include "text/jinja/ast.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/jinja.h"
#include "text/jinja/parser.h"

namespace duet::jinja {
namespace {

// "line 3, column 7: …" reads "at line 3, column 7: …"; other messages follow a colon.
std::string where_prefix(const std::string& message) {
  return (message.rfind("line ", 0) == 0 ? " at " : ": ") + message;
}

}  // namespace

Template::Template(std::unique_ptr<Program> program) : program_(std::move(program)) {}
Template::~Template() = default;

Result<std::unique_ptr<Template>> Template::parse(std::string_view source) {
  auto program = parse_program(source);
  if (!program) return Status::error("template syntax error" + where_prefix(program.message()));
  return std::unique_ptr<Template>(new Template(std::move(program.value())));
}

Result<std::string> Template::render(const nlohmann::ordered_json& context,
                                     const RenderLimits& limits,
                                     const std::optional<DateTime>& now) const {
  if (!context.is_object()) return Status::error("the template context must be a JSON object");
  auto values = from_json(context);
  if (!values) return values.status();
  Interpreter interpreter(*program_, limits, now);
  auto out = interpreter.render(*values);
  if (!out) return Status::error("template error" + where_prefix(out.message()));
  return out;
}

}  // namespace duet::jinja
