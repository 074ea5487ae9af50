// The chat page's files (web/), embedded into the binary at build time:
// cmake/embed_web_assets.cmake turns every file of the bundle (web/dist, written by scripts/setup)
// into a byte array in a generated source file that defines kWebAssets.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace duet {

struct WebAsset {
  std::string_view path;  // "/index.html", "/assets/app.js", ...
  const unsigned char* data;
  size_t size;
  std::string_view etag;  // quoted, from the content's SHA-256: changes whenever the file does
};

// Every embedded file, sorted by path (defined in the generated source).
std::span<const WebAsset> web_assets();

// The file at this path, or null.
const WebAsset* find_web_asset(std::string_view path);

// The Content-Type for a file name, from its extension (application/octet-stream if unknown).
std::string_view web_content_type(std::string_view path);

// The Content-Security-Policy of the page: everything from this server only (no CDN, no
// request leaving it), no inline scripts, no plugins, no framing.
std::string_view web_content_security_policy();

}  // namespace duet
