#include "server/web_assets.h"

#include <algorithm>

namespace duet {

const WebAsset* find_web_asset(std::string_view path) {
  const std::span<const WebAsset> all = web_assets();
  const auto it =
      std::lower_bound(all.begin(), all.end(), path,
                       [](const WebAsset& a, std::string_view p) { return a.path < p; });
  return it != all.end() && it->path == path ? &*it : nullptr;
}

std::string_view web_content_type(std::string_view path) {
  struct Type {
    std::string_view ext, type;
  };
  static constexpr Type kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".woff2", "font/woff2"},
      {".woff", "font/woff"},
      {".ttf", "font/ttf"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".json", "application/json"},
      {".txt", "text/plain; charset=utf-8"},
  };
  for (const Type& t : kTypes)
    if (path.ends_with(t.ext)) return t.type;
  return "application/octet-stream";
}

std::string_view web_content_security_policy() {
  // style-src-attr: KaTeX sizes its boxes with inline style attributes (they load nothing).
  return "default-src 'self'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; "
         "img-src 'self'; font-src 'self'; connect-src 'self'; object-src 'none'; "
         "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
}

}  // namespace duet
