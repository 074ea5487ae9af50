// The route table: exact paths, one handler per method. Unknown paths are 404, known
// paths with another method 405 (with the methods it does take, for the Allow header).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "server/http_types.h"

namespace duet {

class Router {
 public:
  void add(std::string method, std::string path, Handler handler);
  // Every path that starts with `prefix` (e.g. "/v1/models/" for /v1/models/{id}), when no
  // exact route matches; the handler reads the rest from the request's path.
  void add_prefix(std::string method, std::string prefix, Handler handler);

  struct Match {
    const Handler* handler = nullptr;  // null: no route
    bool path_known = false;           // the path exists with other methods (→ 405)
    std::string allow;                 // e.g. "GET, POST" when path_known
  };
  Match match(std::string_view method, std::string_view path) const;

 private:
  // path → method → handler
  std::map<std::string, std::map<std::string, Handler>, std::less<>> routes_;
  std::map<std::string, std::map<std::string, Handler>, std::less<>> prefixes_;
};

}  // namespace duet
