#include "text/template/jinja/lexer.h"

#include <algorithm>

#include "text/template/jinja/preprocess.h"
#include "text/template/jinja/text_util.h"

namespace duet::jinja {

SourceMap::SourceMap(std::string_view source) : source_(source) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < source.size(); ++i)
    if (source[i] == '\n') line_starts_.push_back(static_cast<uint32_t>(i + 1));
}

uint32_t SourceMap::line(uint32_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  return static_cast<uint32_t>(it - line_starts_.begin());
}

uint32_t SourceMap::column(uint32_t offset) const {
  const uint32_t start = line_starts_[line(offset) - 1];
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(source_.size()));
  return static_cast<uint32_t>(count_code_points(source_.substr(start, offset - start))) + 1;
}

std::string SourceMap::where(uint32_t offset) const {
  return "line " + std::to_string(line(offset)) + ", column " + std::to_string(column(offset));
}

namespace {

bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  Lexer(std::string_view source, Preprocessed pp)
      : map_(source), s_(std::move(pp.text)), origin_(std::move(pp.origin)) {}

  Result<std::vector<Token>> run() {
    while (pos_ < s_.size()) {
      DUET_TRY(step());
    }
    return std::move(toks_);
  }

 private:
  SourceMap map_;
  std::string s_;
  std::vector<uint32_t> origin_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int curly_depth_ = 0;  // `}}` inside a dict literal closes the dict, not the expression

  bool at(std::string_view lit) const { return s_.compare(pos_, lit.size(), lit) == 0; }
  Status error(size_t pos, const std::string& msg) const {
    return Status::error(map_.where(origin_[std::min(pos, origin_.size() - 1)]) + ": " + msg);
  }
  void push(Tok kind, std::string value, size_t at) {
    toks_.push_back(Token{kind, std::move(value), origin_[std::min(at, origin_.size() - 1)]});
  }
  void skip_space() {
    while (size_t n = space_at(s_, pos_)) pos_ += n;
  }
  // `{%-` / `{{-` / `{#-`: trailing whitespace of the text before the tag goes.
  void strip_text_before() {
    if (toks_.empty() || toks_.back().kind != Tok::kText) return;
    std::string& t = toks_.back().value;
    t.resize(trim_end(t).size());
    if (t.empty()) toks_.pop_back();
  }

  Status step() {
    const bool after_tag = toks_.empty() || toks_.back().kind == Tok::kCloseStmt ||
                           toks_.back().kind == Tok::kCloseExpr ||
                           toks_.back().kind == Tok::kComment || toks_.back().kind == Tok::kRawText;
    if (after_tag) {
      const size_t start = pos_;
      while (pos_ < s_.size() &&
             !(s_[pos_] == '{' && pos_ + 1 < s_.size() &&
               (s_[pos_ + 1] == '%' || s_[pos_ + 1] == '{' || s_[pos_ + 1] == '#')))
        ++pos_;
      if (pos_ > start) {
        push(Tok::kText, s_.substr(start, pos_ - start), start);
        return {};
      }
    }
    if (at("{#")) return comment();
    if (at("{%-")) {
      strip_text_before();
      push(Tok::kOpenStmt, "{%", pos_);
      pos_ += 3;
      return maybe_raw();
    }
    if (at("{{-")) {
      strip_text_before();
      push(Tok::kOpenExpr, "{{", pos_);
      curly_depth_ = 0;
      pos_ += 3;
      return {};
    }
    skip_space();
    if (pos_ >= s_.size()) return {};
    if (at("-%}") || at("-}}")) {
      push(s_[pos_ + 1] == '%' ? Tok::kCloseStmt : Tok::kCloseExpr, s_.substr(pos_ + 1, 2), pos_);
      pos_ += 3;
      skip_space();
      return {};
    }
    if (at("{%")) {
      push(Tok::kOpenStmt, "{%", pos_);
      pos_ += 2;
      return maybe_raw();
    }
    if (at("%}")) {
      push(Tok::kCloseStmt, "%}", pos_);
      pos_ += 2;
      return {};
    }
    if (at("{{")) {
      push(Tok::kOpenExpr, "{{", pos_);
      curly_depth_ = 0;
      pos_ += 2;
      return {};
    }
    if (at("}}") && curly_depth_ <= 0) {
      push(Tok::kCloseExpr, "}}", pos_);
      pos_ += 2;
      return {};
    }
    static constexpr std::string_view kTwo[] = {"<=", ">=", "==", "!=", "**", "//"};
    for (std::string_view op : kTwo) {
      if (at(op)) {
        push(Tok::kOperator, std::string(op), pos_);
        pos_ += 2;
        return {};
      }
    }
    const char c = s_[pos_];
    if (std::string_view("()[]{},.:|<>+-~*/%=").find(c) != std::string_view::npos) {
      if (c == '{') ++curly_depth_;
      if (c == '}') --curly_depth_;
      push(Tok::kOperator, std::string(1, c), pos_);
      ++pos_;
      return {};
    }
    if (c == '\'' || c == '"') return string_literal();
    if (is_digit(c)) {
      const size_t start = pos_;
      while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
      const bool after_dot =
          !toks_.empty() && toks_.back().kind == Tok::kOperator && toks_.back().value == ".";
      if (!after_dot && pos_ + 1 < s_.size() && s_[pos_] == '.' && is_digit(s_[pos_ + 1])) {
        ++pos_;
        while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
        push(Tok::kFloat, s_.substr(start, pos_ - start), start);
      } else {
        push(Tok::kInteger, s_.substr(start, pos_ - start), start);
      }
      return {};
    }
    if (is_word(c)) {
      const size_t start = pos_;
      while (pos_ < s_.size() && is_word(s_[pos_])) ++pos_;
      push(Tok::kName, s_.substr(start, pos_ - start), start);
      return {};
    }
    size_t end = pos_;
    decode_utf8(s_, end);
    return error(pos_, "unexpected character '" + s_.substr(pos_, end - pos_) + "'");
  }

  Status comment() {
    const size_t start = pos_;
    pos_ += 2;
    const bool strip_before = pos_ < s_.size() && s_[pos_] == '-';
    const size_t close = s_.find("#}", pos_);
    if (close == std::string::npos) return error(start, "comment is not closed with #}");
    const bool strip_after = close > pos_ && s_[close - 1] == '-';
    if (strip_before) strip_text_before();
    push(Tok::kComment, "", start);
    pos_ = close + 2;
    if (strip_after) skip_space();
    return {};
  }

  // After `{%`: a raw block is lexed here, its body kept verbatim.
  Status maybe_raw() {
    size_t p = pos_;
    while (size_t n = space_at(s_, p)) p += n;
    if (s_.compare(p, 3, "raw") != 0 || (p + 3 < s_.size() && is_word(s_[p + 3]))) return {};
    const size_t open = toks_.back().offset;
    p += 3;
    while (size_t n = space_at(s_, p)) p += n;
    bool strip_body_start = false;
    if (s_.compare(p, 3, "-%}") == 0) {
      strip_body_start = true;
      p += 3;
    } else if (s_.compare(p, 2, "%}") == 0) {
      p += 2;
    } else {
      return error(p, "expected %} after raw");
    }
    toks_.pop_back();  // the `{%` of the raw tag
    size_t body = p;
    if (strip_body_start)
      while (size_t n = space_at(s_, body)) body += n;
    for (size_t q = s_.find("{%", body); q != std::string::npos; q = s_.find("{%", q + 1)) {
      size_t r = q + 2;
      const bool strip_body_end = r < s_.size() && s_[r] == '-';
      if (strip_body_end) ++r;
      while (size_t n = space_at(s_, r)) r += n;
      if (s_.compare(r, 6, "endraw") != 0) continue;
      r += 6;
      while (size_t n = space_at(s_, r)) r += n;
      bool strip_after = false;
      if (s_.compare(r, 3, "-%}") == 0) {
        strip_after = true;
        r += 3;
      } else if (s_.compare(r, 2, "%}") == 0) {
        r += 2;
      } else {
        continue;
      }
      std::string text = s_.substr(body, q - body);
      if (strip_body_end) text.resize(trim_end(text).size());
      push(Tok::kRawText, std::move(text), body);
      pos_ = r;
      if (strip_after) skip_space();
      return {};
    }
    return Status::error(map_.where(open) + ": raw block is not closed with {% endraw %}");
  }

  Status string_literal() {
    const size_t start = pos_;
    const char quote = s_[pos_++];
    std::string out;
    uint32_t pending_high = 0;  // a \uD8xx waiting for its low half
    auto flush_high = [&] {
      if (pending_high) append_utf8(out, 0xFFFD);
      pending_high = 0;
    };
    while (true) {
      if (pos_ >= s_.size()) return error(start, "string literal is not closed");
      const char c = s_[pos_];
      if (c == quote) {
        ++pos_;
        break;
      }
      if (c != '\\') {
        flush_high();
        out.push_back(c);
        ++pos_;
        continue;
      }
      if (pos_ + 1 >= s_.size()) return error(start, "string literal is not closed");
      const char e = s_[pos_ + 1];
      pos_ += 2;
      if (e == 'x' || e == 'u' || e == 'U') {
        const int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (int k = 0; k < n; ++k) {
          const int h = pos_ + k < s_.size() ? hex_value(s_[pos_ + k]) : -1;
          if (h < 0) return error(pos_ - 2, "bad \\" + std::string(1, e) + " escape in string");
          cp = cp * 16 + static_cast<uint32_t>(h);
        }
        pos_ += n;
        if (cp >= 0xD800 && cp <= 0xDBFF) {  // JavaScript strings pair UTF-16 halves
          flush_high();
          pending_high = cp;
          continue;
        }
        if (cp >= 0xDC00 && cp <= 0xDFFF && pending_high) {
          cp = 0x10000 + ((pending_high - 0xD800) << 10) + (cp - 0xDC00);
          pending_high = 0;
        }
        flush_high();
        append_utf8(out, cp);
        continue;
      }
      flush_high();
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'v':
          out += '\v';
          break;
        case 'a':
          out += '\a';
          break;
        case '0':
          out += '\0';
          break;
        case '\'':
          out += '\'';
          break;
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '\n':
          break;  // a backslash before a newline joins the lines
        default:  // Python keeps unknown escapes as written
          out += '\\';
          out += e;
      }
    }
    flush_high();
    push(Tok::kString, std::move(out), start);
    return {};
  }
};

}  // namespace

Result<std::vector<Token>> tokenize(std::string_view source) {
  if (source.size() > UINT32_MAX / 2) return Status::error("template is too large");
  return Lexer(source, preprocess(source)).run();
}

}  // namespace duet::jinja
