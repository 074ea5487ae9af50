#include "text/tokenizer/bpe_tokenizer.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "text/tokenizer/bpe_tables.h"
#include "text/tokenizer/pretokenizer.h"
#include "text/tokenizer/unicode.h"
#include "text/tokenizer/vocab.h"

namespace duet {
namespace {

constexpr int32_t kTypeNormal = 1;
constexpr int32_t kTypeControl = 3;
constexpr int32_t kTypeUserDefined = 4;
constexpr int32_t kTypeUnused = 5;
constexpr int32_t kTypeByte = 6;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The bytes an ordinary token stands for: each character of its byte-level spelling maps
// back to one byte. A spelling with a character outside that alphabet stands for its own
// UTF-8 bytes (Hugging Face's ByteLevel decoder does the same).
std::string byte_level_decode(std::string_view text) {
  std::string out;
  for (size_t pos = 0; pos < text.size();) {
    const Utf8Unit u = decode_utf8(text, pos);
    const int b = u.status == Utf8Status::kValid ? byte_of_code_point(u.cp) : -1;
    if (b < 0) return std::string(text);
    out.push_back(static_cast<char>(b));
    pos += u.len;
  }
  return out;
}

// j[key] when j is an object holding a string there, else `fallback`. (nlohmann's value()
// throws when the key holds another type; a tokenizer.json is outside input.)
std::string string_field(const nlohmann::json& j, const char* key,
                         const std::string& fallback = "") {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

bool bool_field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

// Whether a pre_tokenizer (a Split, or a Sequence holding one) cuts with Qwen2's regex.
bool uses_qwen2_split(const nlohmann::json& pre) {
  if (!pre.is_object()) return false;
  const std::string type = string_field(pre, "type");
  if (type == "Sequence") {
    auto list = pre.find("pretokenizers");
    if (list == pre.end() || !list->is_array()) return false;
    return std::any_of(list->begin(), list->end(),
                       [](const nlohmann::json& p) { return uses_qwen2_split(p); });
  }
  if (type != "Split") return false;
  auto pattern = pre.find("pattern");
  if (pattern == pre.end() || !pattern->is_object()) return false;
  auto regex = pattern->find("Regex");
  return regex != pattern->end() && regex->is_string() &&
         regex->get_ref<const std::string&>() == kQwen2SplitRegex;
}

}  // namespace

// Scratch space for one encode call, so the merge loop does not allocate per piece.
struct Tokenizer::Scratch {
  std::string nfc;
  std::vector<MergeSymbol> symbols;
  std::vector<MergeCandidate> heap;
};

Tokenizer::Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Result<Tokenizer> Tokenizer::build(std::vector<std::string> texts, std::vector<int32_t> types,
                                   std::vector<std::pair<std::string, std::string>> merges,
                                   bool nfc) {
  Tokenizer t;
  t.nfc_ = nfc;
  const size_t n = texts.size();
  if (n == 0) return Status::error("the vocabulary is empty");
  if (types.size() != n)
    return Status::error("the vocabulary has token types for some tokens only");
  if (n > static_cast<size_t>(INT32_MAX / 2)) return Status::error("the vocabulary is too large");

  // Ordinary tokens by spelling; merges and the byte alphabet refer to them.
  std::unordered_map<std::string_view, int32_t> id_of;
  id_of.reserve(n);
  t.bytes_.resize(n);
  for (size_t id = 0; id < n; ++id) {
    const std::string& s = texts[id];
    switch (types[id]) {
      case kTypeControl:
      case kTypeUserDefined:
        t.bytes_[id] = s;
        if (!s.empty())
          t.added_.push_back({s, static_cast<int32_t>(id), types[id] == kTypeControl});
        break;
      case kTypeUnused:
        break;
      case kTypeByte:  // "<0xHH>", checked by read_vocab
        if (s.size() == 6 && hex_digit(s[3]) >= 0 && hex_digit(s[4]) >= 0)
          t.bytes_[id] = std::string(1, static_cast<char>(hex_digit(s[3]) * 16 + hex_digit(s[4])));
        break;
      default:
        t.bytes_[id] = byte_level_decode(s);
        id_of.emplace(s, static_cast<int32_t>(id));  // the first id wins a duplicate spelling
    }
  }
  for (int b = 0; b < 256; ++b) {
    auto it = id_of.find(byte_level_spelling(static_cast<uint8_t>(b)));
    if (it == id_of.end())
      return Status::error("the vocabulary has no token for byte " + std::to_string(b) +
                           " (not a byte-level BPE vocabulary)");
    t.byte_ids_[b] = it->second;
  }

  t.merges_ = std::make_unique<MergeTable>(merges.size());
  std::string joined;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    joined = left + right;
    auto l = id_of.find(left), r = id_of.find(right), m = id_of.find(joined);
    if (l == id_of.end() || r == id_of.end() || m == id_of.end())
      return Status::error("merge " + std::to_string(rank) +
                           " names a token that is not in the vocabulary");
    t.merges_->insert(l->second, r->second, static_cast<int32_t>(rank),
                      m->second);  // first rank wins
  }

  // Added tokens: longest first, so that at one position the longest spelling wins.
  std::stable_sort(t.added_.begin(), t.added_.end(), [](const AddedToken& a, const AddedToken& b) {
    return a.text.size() > b.text.size();
  });
  if (t.added_.size() > UINT16_MAX) return Status::error("too many added tokens");
  for (size_t i = 0; i < t.added_.size(); ++i)
    t.added_by_first_byte_[static_cast<uint8_t>(t.added_[i].text[0])].push_back(
        static_cast<uint16_t>(i));

  t.texts_ = std::move(texts);
  t.types_ = std::move(types);
  t.cache_ = std::make_unique<PieceCache>();
  return t;
}

Result<Tokenizer> Tokenizer::from_gguf(const GgufFile& file) {
  auto vocab = read_vocab(file);
  if (!vocab) return vocab.status();
  if (vocab->model != "gpt2")
    return Status::error("tokenizer.ggml.model is '" + vocab->model +
                         "'; only byte-level BPE ('gpt2') is supported");
  if (!vocab->pre.empty() && vocab->pre != "qwen2")
    return Status::error("tokenizer.ggml.pre is '" + vocab->pre +
                         "'; only the Qwen2 pre-tokenizer ('qwen2') is supported");
  std::vector<std::string> texts(vocab->tokens.begin(), vocab->tokens.end());
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(vocab->merges.size());
  for (std::string_view m : vocab->merges) {
    const size_t sp = m.find(' ');  // read_vocab checked that there is one, inside
    merges.emplace_back(std::string(m.substr(0, sp)), std::string(m.substr(sp + 1)));
  }
  auto t = build(std::move(texts), std::move(vocab->types), std::move(merges), /*nfc=*/true);
  if (!t) return t.status().with_context("tokenizer");
  return t;
}

Result<Tokenizer> Tokenizer::from_hf_json(std::string_view tokenizer_json) {
  using nlohmann::json;
  const json doc = json::parse(tokenizer_json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return Status::error("tokenizer.json is not a JSON object");
  auto it = doc.find("model");
  if (it == doc.end() || !it->is_object()) return Status::error("tokenizer.json has no model");
  const json& model = *it;
  if (model.contains("type") && string_field(model, "type") != "BPE")
    return Status::error("tokenizer.json: the model is not BPE");
  if (bool_field(model, "byte_fallback"))
    return Status::error(
        "tokenizer.json: byte_fallback BPE is not supported (byte-level BPE only)");
  auto vocab_it = model.find("vocab");
  auto merges_it = model.find("merges");
  if (vocab_it == model.end() || !vocab_it->is_object() || merges_it == model.end() ||
      !merges_it->is_array())
    return Status::error("tokenizer.json: model.vocab must be an object and model.merges an array");

  // Only Qwen2's pre-tokenizer is implemented; refuse others rather than cut text wrongly.
  if (auto pre = doc.find("pre_tokenizer"); pre == doc.end() || !uses_qwen2_split(*pre))
    return Status::error("tokenizer.json: the pre-tokenizer is not Qwen2's; it is not supported");
  bool nfc = false;
  if (auto n = doc.find("normalizer"); n != doc.end() && !n->is_null()) {
    if (string_field(*n, "type") != "NFC")
      return Status::error("tokenizer.json: only the NFC normalizer (or none) is supported");
    nfc = true;
  }

  // Ids may leave gaps; a gap becomes an UNUSED token. Ids are bounded by the number of
  // entries (with room for gaps) before anything is allocated for them.
  auto added = doc.find("added_tokens");
  const bool has_added = added != doc.end() && !added->is_null();
  if (has_added && !added->is_array())
    return Status::error("tokenizer.json: added_tokens is not an array");
  const int64_t entries = static_cast<int64_t>(vocab_it->size() + (has_added ? added->size() : 0));
  const int64_t max_id = std::min<int64_t>(2 * entries + 1024, int64_t{1} << 24);
  std::vector<std::string> texts;
  std::vector<int32_t> types;
  auto place = [&](const json& id, std::string text, int32_t type) -> Status {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= max_id)
      return Status::error("tokenizer.json: token id " + id.dump() + " is not an integer in [0, " +
                           std::to_string(max_id) + ")");
    const size_t i = static_cast<size_t>(id.get<int64_t>());
    if (i >= texts.size()) texts.resize(i + 1), types.resize(i + 1, kTypeUnused);
    texts[i] = std::move(text);
    types[i] = type;
    return Status::ok();
  };
  for (const auto& [text, id] : vocab_it->items()) DUET_TRY(place(id, text, kTypeNormal));
  if (has_added) {
    for (const json& a : *added) {
      if (!a.is_object() || !a.contains("id") || !a.contains("content") ||
          !a["content"].is_string())
        return Status::error("tokenizer.json: an added_tokens entry lacks id or content");
      DUET_TRY(place(a["id"], a["content"].get<std::string>(),
                     bool_field(a, "special") ? kTypeControl : kTypeUserDefined));
    }
  }
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(merges_it->size());
  for (const json& m : *merges_it) {
    if (m.is_string()) {
      const std::string& s = m.get_ref<const std::string&>();
      const size_t sp = s.find(' ');
      if (sp == std::string::npos || sp == 0 || sp + 1 == s.size())
        return Status::error("tokenizer.json: merge '" + s.substr(0, 32) +
                             "' is not two tokens separated by a space");
      merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      return Status::error("tokenizer.json: a merge is neither \"a b\" nor [\"a\", \"b\"]");
    }
  }
  auto t = build(std::move(texts), std::move(types), std::move(merges), nfc);
  if (!t) return t.status().with_context("tokenizer.json");
  return t;
}

std::vector<int32_t> Tokenizer::encode_user(std::string_view text) const {
  static const TextSpans kNothingTrusted;
  return encode(text, &kNothingTrusted, false);
}

std::vector<int32_t> Tokenizer::encode_template(std::string_view text) const {
  return encode(text, nullptr, false);
}

std::vector<int32_t> Tokenizer::encode_marked(std::string_view text, const TextSpans& trusted,
                                              ClientAddedTokens client) const {
  return encode(text, &trusted, client == ClientAddedTokens::kNonSpecial);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, const TextSpans* trusted,
                                       bool non_special_in_client) const {
  Scratch scratch;
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  size_t segment_start = 0;
  size_t pos = 0;
  size_t span = 0;  // with `trusted`: the first span that ends after pos (pos only grows)
  while (pos < text.size()) {
    size_t trusted_end = text.size();  // where the trusted run around pos ends; pos if none
    if (trusted != nullptr) {
      while (span < trusted->size() && (*trusted)[span].end <= pos) ++span;
      const bool in_span = span < trusted->size() && (*trusted)[span].begin <= pos;
      trusted_end = in_span ? (*trusted)[span].end : pos;
      if (!in_span && !non_special_in_client) {
        // Nothing can match in client text: go on at the next trusted byte.
        pos = span < trusted->size() ? (*trusted)[span].begin : text.size();
        continue;
      }
    }
    const std::vector<uint16_t>& candidates = added_by_first_byte_[static_cast<uint8_t>(text[pos])];
    const AddedToken* found = nullptr;
    for (uint16_t i : candidates) {
      const AddedToken& a = added_[i];
      const bool allowed =
          pos + a.text.size() <= trusted_end || (non_special_in_client && !a.control);
      if (allowed && text.substr(pos).starts_with(a.text)) {
        found = &a;
        break;
      }
    }
    if (found == nullptr) {
      ++pos;
      continue;
    }
    encode_text(text.substr(segment_start, pos - segment_start), &out, &scratch);
    out.push_back(found->id);
    pos += found->text.size();
    segment_start = pos;
  }
  encode_text(text.substr(segment_start), &out, &scratch);
  return out;
}

void Tokenizer::encode_text(std::string_view text, std::vector<int32_t>* out,
                            Scratch* scratch) const {
  if (text.empty()) return;
  const std::string_view normalized = nfc_ ? to_nfc(text, &scratch->nfc) : text;
  for (size_t pos = 0; pos < normalized.size();) {
    const size_t end = pretoken_end(normalized, pos);
    encode_piece(normalized.substr(pos, end - pos), out, scratch);
    pos = end;
  }
}

void Tokenizer::encode_piece(std::string_view piece, std::vector<int32_t>* out,
                             Scratch* scratch) const {
  if (piece.size() == 1) {
    out->push_back(byte_ids_[static_cast<uint8_t>(piece[0])]);
    return;
  }
  if (cache_->get(piece, out)) return;
  const size_t before = out->size();
  merge_piece(piece, out, scratch);
  cache_->put(piece, std::span<const int32_t>(out->data() + before, out->size() - before));
}

void Tokenizer::merge_piece(std::string_view piece, std::vector<int32_t>* out,
                            Scratch* scratch) const {
  // A doubly linked list of symbols and a min-heap of adjacent pairs that have a merge,
  // ordered by (rank, position). A popped pair whose symbols have changed since it was
  // pushed is stale and skipped. O(n log n) in the piece length.
  auto& syms = scratch->symbols;
  auto& heap = scratch->heap;
  const int32_t n = static_cast<int32_t>(piece.size());
  syms.resize(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i)
    syms[i] = {byte_ids_[static_cast<uint8_t>(piece[i])], i - 1, i + 1 < n ? i + 1 : -1};
  heap.clear();
  auto consider = [&](int32_t i) {
    const int32_t j = syms[i].next;
    if (j < 0) return false;
    const MergeTable::Entry* e = merges_->find(syms[i].id, syms[j].id);
    if (e == nullptr) return false;
    heap.push_back({e->rank, i, syms[i].id, syms[j].id, e->merged});
    return true;
  };
  for (int32_t i = 0; i + 1 < n; ++i) consider(i);
  std::make_heap(heap.begin(), heap.end(), MergeCandidate::Later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), MergeCandidate::Later);
    const MergeCandidate c = heap.back();
    heap.pop_back();
    MergeSymbol& left = syms[c.pos];
    if (left.id != c.left || left.next < 0 || syms[left.next].id != c.right) continue;  // stale
    MergeSymbol& right = syms[left.next];
    left.id = c.merged;
    left.next = right.next;
    if (right.next >= 0) syms[right.next].prev = c.pos;
    right.id = -1;
    if (left.prev >= 0 && consider(left.prev))
      std::push_heap(heap.begin(), heap.end(), MergeCandidate::Later);
    if (consider(c.pos)) std::push_heap(heap.begin(), heap.end(), MergeCandidate::Later);
  }
  for (int32_t i = 0; i >= 0; i = syms[i].next) out->push_back(syms[i].id);
}

Result<std::string> Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string out;
  for (int32_t id : ids) {
    if (id < 0 || id >= n_vocab())
      return Status::error("token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                           std::to_string(n_vocab() - 1) + ")");
    if (skip_special && types_[id] == kTypeControl) continue;
    out += bytes_[id];
  }
  return out;
}

std::string_view Tokenizer::token_bytes(int32_t id) const {
  return id >= 0 && id < n_vocab() ? std::string_view(bytes_[id]) : std::string_view();
}

std::string_view Tokenizer::token_text(int32_t id) const {
  return id >= 0 && id < n_vocab() ? std::string_view(texts_[id]) : std::string_view();
}

std::optional<int32_t> Tokenizer::find_token(std::string_view text) const {
  if (text.empty()) return std::nullopt;
  for (const AddedToken& a : added_)
    if (a.text == text) return a.id;
  // A linear scan (~0.2 ms over Qwen3's vocabulary): this is for setup, not for hot paths.
  for (size_t id = 0; id < bytes_.size(); ++id)
    if (bytes_[id] == text && types_[id] != kTypeUnused) return static_cast<int32_t>(id);
  return std::nullopt;
}

bool Tokenizer::is_control(int32_t id) const {
  return id >= 0 && id < n_vocab() && types_[id] == kTypeControl;
}

bool Tokenizer::is_added(int32_t id) const {
  return id >= 0 && id < n_vocab() &&
         (types_[id] == kTypeControl || types_[id] == kTypeUserDefined);
}

std::string IncrementalDecoder::push(int32_t id) {
  if (id < 0 || id >= tokenizer_.n_vocab()) return "";
  if (skip_special_ && tokenizer_.is_control(id)) return "";
  pending_ += tokenizer_.token_bytes(id);
  // Everything up to a trailing, still-completable sequence goes out now.
  size_t hold_from = pending_.size();
  for (size_t pos = 0; pos < pending_.size();) {
    if (static_cast<uint8_t>(pending_[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const Utf8Unit u = decode_utf8(pending_, pos);
    if (u.status == Utf8Status::kTruncated) {
      hold_from = pos;
      break;
    }
    pos += u.len;
  }
  std::string out;
  append_utf8_lossy(&out, std::string_view(pending_).substr(0, hold_from));
  pending_.erase(0, hold_from);
  return out;
}

std::string IncrementalDecoder::flush() {
  std::string out;
  append_utf8_lossy(&out, pending_);
  pending_.clear();
  return out;
}

}  // namespace duet
