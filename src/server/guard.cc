#include "server/guard.h"

#include <algorithm>
#include <cctype>

namespace duet {

bool constant_time_equals(std::string_view given, std::string_view expected) {
  // volatile keeps the compiler from turning the loop into an early-exit comparison.
  volatile unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff = diff | (g ^ static_cast<unsigned char>(expected[i]));
  }
  return diff == 0;
}

bool is_loopback_host(std::string_view h) {
  return h == "localhost" || h == "::1" || h == "[::1]" || h.starts_with("127.");
}

namespace {

bool all_digits(std::string_view s) {
  if (s.empty() || s.size() > 5) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool ascii_iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace

bool host_header_allowed(std::string_view host) {
  std::string_view name = host;
  if (host.starts_with("[")) {
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    name = host.substr(0, close + 1);
    std::string_view rest = host.substr(close + 1);
    if (!rest.empty() && !(rest[0] == ':' && all_digits(rest.substr(1)))) return false;
  } else if (const size_t colon = host.find(':'); colon != std::string_view::npos) {
    name = host.substr(0, colon);
    if (!all_digits(host.substr(colon + 1))) return false;
  }
  return ascii_iequals(name, "localhost") || name == "127.0.0.1" || name == "[::1]";
}

std::string_view bearer_token(std::string_view authorization) {
  constexpr std::string_view kPrefix = "bearer ";
  if (authorization.size() <= kPrefix.size() ||
      !ascii_iequals(authorization.substr(0, kPrefix.size()), kPrefix))
    return {};
  std::string_view token = authorization.substr(kPrefix.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return token;
}

OriginVerdict check_origin(std::string_view origin, std::string_view host,
                           const std::vector<std::string>& allowed) {
  if (origin.empty()) return OriginVerdict::kNoOrigin;
  for (const std::string& a : allowed)
    if (a == "*" || a == origin) return OriginVerdict::kAllowed;
  // Same origin: the scheme is http (duet serves no TLS) and the authority is the Host.
  if (!host.empty() && origin.starts_with("http://") && ascii_iequals(origin.substr(7), host))
    return OriginVerdict::kSameOrigin;
  return OriginVerdict::kRefused;
}

std::string sanitize_request_id(std::string_view id) {
  if (id.empty() || id.size() > 128) return {};
  for (char c : id) {
    const bool ok =
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok) return {};
  }
  return std::string(id);
}

std::optional<RequestTarget> parse_request_target(std::string_view target) {
  if (target.starts_with("/")) return RequestTarget{"", std::string(target)};
  size_t scheme = 0;
  if (target.size() > 7 && ascii_iequals(target.substr(0, 7), "http://"))
    scheme = 7;
  else if (target.size() > 8 && ascii_iequals(target.substr(0, 8), "https://"))
    scheme = 8;
  else
    return std::nullopt;
  const std::string_view rest = target.substr(scheme);
  const size_t end = std::min(rest.find_first_of("/?#"), rest.size());
  const std::string_view authority = rest.substr(0, end);
  if (authority.empty() || authority.find('@') != std::string_view::npos) return std::nullopt;
  std::string origin(rest.substr(end));
  if (const size_t hash = origin.find('#'); hash != std::string::npos) origin.resize(hash);
  if (origin.empty() || origin[0] != '/') origin.insert(0, "/");
  return RequestTarget{std::string(authority), std::move(origin)};
}

TransferEncodingVerdict check_transfer_encoding(const std::vector<std::string_view>& fields) {
  std::vector<std::string_view> codings;
  for (std::string_view field : fields) {
    size_t start = 0;
    while (start <= field.size()) {
      const size_t comma = std::min(field.find(',', start), field.size());
      std::string_view c = field.substr(start, comma - start);
      while (!c.empty() && (c.front() == ' ' || c.front() == '\t')) c.remove_prefix(1);
      while (!c.empty() && (c.back() == ' ' || c.back() == '\t')) c.remove_suffix(1);
      // Parameters (";q=...") belong to the coding before them.
      if (const size_t semi = c.find(';'); semi != std::string_view::npos) {
        c = c.substr(0, semi);
        while (!c.empty() && c.back() == ' ') c.remove_suffix(1);
      }
      if (c.empty()) return TransferEncodingVerdict::kBad;
      codings.push_back(c);
      start = comma + 1;
    }
  }
  if (codings.empty()) return TransferEncodingVerdict::kNone;
  int chunked = 0;
  for (std::string_view c : codings) chunked += ascii_iequals(c, "chunked");
  if (chunked != 1 || !ascii_iequals(codings.back(), "chunked"))
    return TransferEncodingVerdict::kBad;
  return codings.size() == 1 ? TransferEncodingVerdict::kChunked
                             : TransferEncodingVerdict::kNotImplemented;
}

}  // namespace duet
