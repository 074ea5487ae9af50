// Reading the golden chat-template cases (../shared/golden/chat_template_cases.json and
// templates/template_cases.json) the same way in every test that replays them.
#pragma once

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "text/template/chat_template.h"

namespace duet::test {

// Key order matters (tojson prints it), so JSON is read into ordered_json.
inline nlohmann::ordered_json read_ordered_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// A Qwen3 case's options, from its "kwargs".
inline ChatTemplateOptions qwen3_case_options(const nlohmann::ordered_json& kwargs) {
  ChatTemplateOptions opt;
  opt.add_generation_prompt = kwargs.value("add_generation_prompt", false);
  if (kwargs.contains("enable_thinking"))
    opt.enable_thinking = kwargs["enable_thinking"].get<bool>();
  return opt;
}

// The conditions the other models' references were rendered under (templates/README in the
// golden data).
inline ChatTemplateOptions other_model_case_options() {
  ChatTemplateOptions opt;
  opt.add_generation_prompt = true;
  opt.bos_token = "<s>";
  opt.eos_token = "</s>";
  opt.date_string = "29 Nov 2026";  // strftime_now reads this date too
  return opt;
}

}  // namespace duet::test
