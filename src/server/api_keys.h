// The keys a keyed server accepts: --api-key (repeatable; DUET_API_KEY supplies it from the
// environment), each value holding one key or several separated by commas, and --api-key-file
// (one key per line). Any one of them opens every route but /health and the chat page's files.
// Nothing here logs or returns a key in a message: errors name the flag, the file and the line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace duet {

// The keys of --api-key values: each split at commas, spaces around a key dropped, empty
// pieces ignored (so an empty DUET_API_KEY asks for no key). A key is printable ASCII without
// spaces (it travels in an HTTP header that a browser must be able to send).
Result<std::vector<std::string>> parse_api_key_values(const std::vector<std::string>& values);

// The keys of a key file's text: one per line, spaces around it dropped (and a Windows line
// end); blank lines and lines starting with # ignored. `path` only names the file in errors.
// A file with no key is an error: the server would otherwise start without the key its
// administrator meant to require.
Result<std::vector<std::string>> parse_api_key_file(std::string_view text, std::string_view path);

// Every key the server accepts: the values' and, when `file` is not empty, the file's (read
// here; a missing or unreadable file is an error naming it). Duplicates are kept once.
Result<std::vector<std::string>> load_api_keys(const std::vector<std::string>& values,
                                               const std::string& file);

// True when `given` is one of `keys`. Every key is compared, each in constant time, so the
// response time does not say which key came close.
bool api_key_accepted(std::string_view given, const std::vector<std::string>& keys);

}  // namespace duet
