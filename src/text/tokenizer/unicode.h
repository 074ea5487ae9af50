// UTF-8 decoding that never fails, the Unicode character tests the Qwen2 pre-tokenizer needs,
// and NFC normalization (via utf8proc, with a fast path for text that is already NFC).
//
// Text from outside (a request, stdin) may hold bytes that are not well-formed UTF-8. Nothing
// here rejects them: the decoder reports each bad byte as its own unit, the character tests
// treat such a unit as "other" (not a letter, number or space), and NFC leaves it in place.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace duet {

enum class Utf8Status : uint8_t {
  kValid,      // a well-formed sequence: `cp` and `len` are set
  kTruncated,  // the text ends inside a sequence that could still become well-formed
  kInvalid,    // ill-formed at this byte
};

struct Utf8Unit {
  uint32_t cp = 0;   // the code point (kValid only)
  uint32_t len = 1;  // kValid: the sequence's length. kTruncated: the bytes present.
                     // kInvalid: the maximal ill-formed subpart (Unicode §3.9), at least 1.
  Utf8Status status = Utf8Status::kInvalid;
};

// Decodes the unit that starts at text[pos] (pos < text.size()). Overlong forms, surrogates
// and values above U+10FFFF are ill-formed, as in the Unicode standard.
Utf8Unit decode_utf8(std::string_view text, size_t pos);

bool is_valid_utf8(std::string_view text);

// Appends the UTF-8 encoding of `cp` (which must be a scalar value, not a surrogate).
void append_utf8(std::string* out, uint32_t cp);

// Appends `bytes` with every ill-formed subpart replaced by U+FFFD, so the result is valid.
void append_utf8_lossy(std::string* out, std::string_view bytes);

// \p{L}: general category Lu, Ll, Lt, Lm or Lo.
bool is_letter(uint32_t cp);
// \p{N}: general category Nd, Nl or No.
bool is_number(uint32_t cp);
// \s as Oniguruma (Hugging Face tokenizers) and Rust's regex define it: the Unicode
// White_Space property (U+0009–000D, U+0020, U+0085, U+00A0, U+1680, U+2000–200A, U+2028,
// U+2029, U+202F, U+205F, U+3000). Note that JavaScript's \s differs (adds U+FEFF, lacks U+0085).
bool is_whitespace(uint32_t cp);

// `text` in Normalization Form C. Ill-formed bytes are kept as they are and bound the
// normalized stretches. Returns `text` itself when it is already NFC (the common case, found
// without copying), otherwise a view of `*storage`, which it overwrites.
std::string_view to_nfc(std::string_view text, std::string* storage);

}  // namespace duet
