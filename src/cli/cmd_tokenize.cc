// duet tokenize -m FILE [--parse-special]: UTF-8 text on stdin -> JSON array of ids on stdout.
//
//   -m FILE               the tokenizer of a GGUF model
//   --tokenizer-json P    or a Hugging Face tokenizer.json (a file, or the folder holding one)
//   --parse-special       every added token spelled in the text — control tokens such as
//                         <|im_start|> and non-special ones such as <think> — becomes its id,
//                         as Hugging Face's tokenizer.encode(text) and duet's own template
//                         text do; without it the text is user text and no added token
//                         matches: "<|im_end|>" and "<think>" are encoded as characters
//   --jsonl               one JSON string per input line -> one JSON array per output line
//   --decode              the reverse: a JSON array of ids -> the bytes they stand for (with
//                         --jsonl: one array per line -> one JSON string per line, ill-formed
//                         UTF-8 shown as U+FFFD); --skip-special drops control tokens
//
// Input that is not valid UTF-8 is still tokenized, byte by byte where it is ill-formed:
// byte-level BPE has a token for every byte, and decoding gives the same bytes back.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "gguf/gguf_file.h"
#include "text/tokenizer/bpe_tokenizer.h"

namespace duet::cli {
namespace {

struct TokenizeArgs {
  std::string model;
  std::string tokenizer_json;
  bool parse_special = false;
  bool jsonl = false;
  bool decode = false;
  bool skip_special = false;
};

Result<Tokenizer> load_tokenizer(const TokenizeArgs& a) {
  if (!a.model.empty()) {
    auto file = GgufModelFile::open(a.model);
    if (!file) return file.status().with_context("cannot read " + a.model);
    return Tokenizer::from_gguf((*file)->gguf());
  }
  std::string path = a.tokenizer_json;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) path += "/tokenizer.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return Tokenizer::from_hf_json(ss.str());
}

void append_ids(std::string* out, const std::vector<int32_t>& ids) {
  out->push_back('[');
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out->push_back(',');
    *out += std::to_string(ids[i]);
  }
  out->push_back(']');
}

Result<std::vector<int32_t>> parse_ids(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) return Status::error("expected a JSON array of token ids");
  std::vector<int32_t> ids;
  ids.reserve(j.size());
  for (const auto& v : j) {
    if (!v.is_number_integer() || v.get<int64_t>() < INT32_MIN || v.get<int64_t>() > INT32_MAX)
      return Status::error("expected a JSON array of token ids");
    ids.push_back(static_cast<int32_t>(v.get<int64_t>()));
  }
  return ids;
}

int run_jsonl(const Tokenizer& t, const TokenizeArgs& a, const std::string& input) {
  std::string out;
  size_t line_no = 0;
  for (size_t pos = 0; pos < input.size();) {
    size_t end = input.find('\n', pos);
    if (end == std::string::npos) end = input.size();
    const std::string_view line = std::string_view(input).substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty()) continue;
    if (a.decode) {
      auto ids = parse_ids(line);
      if (!ids) return fail("line " + std::to_string(line_no) + ": " + ids.message());
      auto bytes = t.decode(*ids, a.skip_special);
      if (!bytes) return fail("line " + std::to_string(line_no) + ": " + bytes.message());
      out += nlohmann::json(*bytes).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    } else {
      const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded() || !j.is_string())
        return fail("line " + std::to_string(line_no) + " is not a JSON string");
      const std::string& text = j.get_ref<const std::string&>();
      append_ids(&out, a.parse_special ? t.encode_template(text) : t.encode_user(text));
    }
    out.push_back('\n');
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int run_tokenize(const TokenizeArgs& a) {
  if (a.model.empty() == a.tokenizer_json.empty())
    return fail("tokenize needs one of -m FILE or --tokenizer-json PATH");
  auto t = load_tokenizer(a);
  if (!t) return fail("tokenizer: " + t.message());
  std::ios::sync_with_stdio(false);
  const std::string input((std::istreambuf_iterator<char>(std::cin)),
                          std::istreambuf_iterator<char>());
  if (a.jsonl) return run_jsonl(*t, a, input);
  std::string out;
  if (a.decode) {
    auto ids = parse_ids(input);
    if (!ids) return fail(ids.message());
    auto bytes = t->decode(*ids, a.skip_special);
    if (!bytes) return fail(bytes.message());
    out = std::move(bytes.value());
  } else {
    append_ids(&out, a.parse_special ? t->encode_template(input) : t->encode_user(input));
    out.push_back('\n');
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

void add_tokenize_command(CLI::App& app, Action* run) {
  auto a = std::make_shared<TokenizeArgs>();
  CLI::App* cmd =
      app.add_subcommand("tokenize", "UTF-8 text on stdin -> JSON array of token ids on stdout");
  cmd->add_option("-m,--model", a->model, "GGUF model file whose tokenizer to use");
  cmd->add_option("--tokenizer-json", a->tokenizer_json,
                  "a Hugging Face tokenizer.json (or its folder) instead of -m");
  cmd->add_flag("--parse-special", a->parse_special,
                "the text is template text: every added token spelled in it (<|im_start|>,\n"
                "<|im_end|>, <think>, <tool_call>...) becomes its id, as Hugging Face's\n"
                "tokenizer.encode does. Without it the text is user text: no added token\n"
                "matches, each is encoded as the characters it is spelled with");
  cmd->add_flag("--jsonl", a->jsonl,
                "one JSON string per input line -> one JSON array per output line");
  cmd->add_flag("--decode", a->decode, "decode a JSON array of ids to text instead");
  cmd->add_flag("--skip-special", a->skip_special, "with --decode: drop control tokens");
  cmd->callback([run, a] { *run = [a] { return run_tokenize(*a); }; });
}

}  // namespace duet::cli
