// Checks every request passes before it reaches a route: the Host header (against DNS
// rebinding when bound to loopback), the Origin header (CORS), and the API key. Plain
// functions over strings, so they are unit-tested without a socket.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet {

// Compares in time that depends only on `expected`'s length, never on where the first
// difference is (so response timing does not leak the key byte by byte).
bool constant_time_equals(std::string_view given, std::string_view expected);

// True for the loopback spellings the server binds to: 127.x.x.x, ::1, localhost.
bool is_loopback_host(std::string_view bind_host);

// On a loopback bind, a browser page from another site could reach the server through a
// DNS name it controls that resolves to 127.0.0.1 (DNS rebinding); its requests carry that
// name in Host. Only localhost, 127.0.0.1 and [::1], each with an optional port, pass.
bool host_header_allowed(std::string_view host);

// The key a client sent: "Authorization: Bearer KEY" (OpenAI clients, ollama's headers).
// Empty when absent or malformed.
std::string_view bearer_token(std::string_view authorization);

// What to do with a request's Origin header.
enum class OriginVerdict {
  kNoOrigin,    // not a browser cross-site request: nothing to do
  kSameOrigin,  // the page the server itself serves (Origin matches Host)
  kAllowed,     // listed in --cors-origin: answer with Access-Control-Allow-Origin
  kRefused,     // a foreign site: refuse
};
// `allowed` holds exact origins ("http://localhost:3000") or "*".
OriginVerdict check_origin(std::string_view origin, std::string_view host,
                           const std::vector<std::string>& allowed);

// A request line's target (RFC 9112 §3.2). Origin-form ("/path?query") as it is;
// absolute-form ("http://host:port/path?query", what a proxy is sent) split into the
// authority, which then stands for the Host header (§3.2.2), and the origin-form part.
struct RequestTarget {
  std::string authority;  // empty for origin-form
  std::string origin_form;
};
// nullopt: neither form (asterisk-form, authority-form, garbage, userinfo in the authority).
std::optional<RequestTarget> parse_request_target(std::string_view target);

// What to do with a request's Transfer-Encoding fields (all of them, in order).
enum class TransferEncodingVerdict {
  kNone,            // no Transfer-Encoding
  kChunked,         // exactly "chunked": the body is read chunk by chunk
  kNotImplemented,  // codings before "chunked" that the server does not decode (gzip, ...): 501
  kBad,             // "chunked" not last or more than once, or an empty coding: 400 and close
};
TransferEncodingVerdict check_transfer_encoding(const std::vector<std::string_view>& fields);

// X-Request-Id from the client if it is short and plain ([A-Za-z0-9._:-], at most 128
// bytes), otherwise empty (the server then makes one up). Never echoes raw bytes.
std::string sanitize_request_id(std::string_view id);

}  // namespace duet
