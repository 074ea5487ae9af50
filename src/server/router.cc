#include "server/router.h"

#include <utility>

namespace duet {

void Router::add(std::string method, std::string path, Handler handler) {
  routes_[std::move(path)][std::move(method)] = std::move(handler);
}

void Router::add_prefix(std::string method, std::string prefix, Handler handler) {
  prefixes_[std::move(prefix)][std::move(method)] = std::move(handler);
}

Router::Match Router::match(std::string_view method, std::string_view path) const {
  Match m;
  const std::map<std::string, Handler>* found = nullptr;
  if (const auto it = routes_.find(path); it != routes_.end()) {
    found = &it->second;
  } else {
    for (const auto& [prefix, methods] : prefixes_)
      if (path.size() > prefix.size() && path.starts_with(prefix)) found = &methods;
  }
  if (found == nullptr) return m;
  m.path_known = true;
  const auto& methods = *found;
  // HEAD is answered like GET without a body; the session drops the body.
  std::string_view wanted = method == "HEAD" ? std::string_view("GET") : method;
  const auto h = methods.find(std::string(wanted));
  if (h != methods.end()) {
    m.handler = &h->second;
    return m;
  }
  for (const auto& [name, handler] : methods) {
    if (!m.allow.empty()) m.allow += ", ";
    m.allow += name;
  }
  return m;
}

}  // namespace duet
