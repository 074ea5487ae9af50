// Template: the public face of the engine (jinja.h) over parser and interpreter.
#include "text/template/jinja/ast.h"
#include "text/template/jinja/interpreter.h"
#include "text/template/jinja/jinja.h"
#include "text/template/jinja/parser.h"

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
  auto out = render_marked(nlohmann::ordered_json::object(), context, limits, now);
  if (!out) return out.status();
  return std::move(out->text);
}

Result<MarkedText> Template::render_marked(const nlohmann::ordered_json& trusted_context,
                                           const nlohmann::ordered_json& client_context,
                                           const RenderLimits& limits,
                                           const std::optional<DateTime>& now) const {
  if (!trusted_context.is_object() || !client_context.is_object())
    return Status::error("the template context must be a JSON object");
  auto trusted = from_json(trusted_context, /*trusted=*/true);
  if (!trusted) return trusted.status();
  auto client = from_json(client_context, /*trusted=*/false);
  if (!client) return client.status();
  Dict context = trusted->dict();
  for (const auto& [k, v] : client->dict().entries()) context.set(k, v);
  Interpreter interpreter(*program_, limits, now);
  auto out = interpreter.render(Value::dict(std::move(context)));
  if (!out) return Status::error("template error" + where_prefix(out.message()));
  return out;
}

}  // namespace duet::jinja
