#include "server/sd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

namespace duet {

Status sd_notify(std::string_view state) {
  const char* env = std::getenv("NOTIFY_SOCKET");
  if (env == nullptr || *env == '\0') return Status::ok();
  const std::string_view path = env;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  // The abstract namespace: a leading NUL instead of '@', and the length says where it ends.
  if (path.front() != '/' && path.front() != '@')
    return Status::error("NOTIFY_SOCKET is neither a path nor an abstract socket name");
  if (path.size() > sizeof(addr.sun_path) - 1)
    return Status::error("NOTIFY_SOCKET is longer than a unix socket address");
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (path.front() == '@') addr.sun_path[0] = '\0';
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() +
                                               (path.front() == '@' ? 0 : 1));

  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::error(std::string("sd_notify: socket: ") + std::strerror(errno));
  ssize_t sent;
  do {
    sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                    reinterpret_cast<const sockaddr*>(&addr), len);
  } while (sent < 0 && errno == EINTR);
  const int err = errno;
  ::close(fd);
  if (sent < 0) return Status::error(std::string("sd_notify: ") + std::strerror(err));
  if (static_cast<size_t>(sent) != state.size())
    return Status::error("sd_notify: the message was cut short");
  return Status::ok();
}

}  // namespace duet
