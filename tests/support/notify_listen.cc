// A stand-in for systemd's notify socket, for tests/cli/serve_systemd.sh:
//   duet_notify_listen SOCKET_PATH PORT SECONDS
// binds a unix datagram socket at SOCKET_PATH and prints each datagram it receives, one
// assignment per line ("READY=1"). Right when a datagram holding READY=1 arrives, before
// printing it, it asks the server on 127.0.0.1:PORT for GET /ready and prints the status as
// "/ready=200", so that the test sees what /ready said at the moment duet claimed to be
// ready. It exits after STOPPING=1, or after SECONDS with status 1.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// The status code of GET /ready on 127.0.0.1:port, or 0 when there is no answer.
int ready_status(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int status = 0;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string req = "GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      char buf[64] = {};
      size_t got = 0;
      while (got < 12) {
        const ssize_t n = ::recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
        if (n <= 0) break;
        got += static_cast<size_t>(n);
      }
      if (got >= 12 && std::strncmp(buf, "HTTP/1.1 ", 9) == 0) status = std::atoi(buf + 9);
    }
  }
  ::close(fd);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: duet_notify_listen SOCKET_PATH PORT SECONDS\n");
    return 2;
  }
  const std::string path = argv[1];
  const int port = std::atoi(argv[2]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoi(argv[3]));
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (fd < 0 || path.size() >= sizeof(addr.sun_path)) {
    std::fprintf(stderr, "duet_notify_listen: no socket at %s\n", path.c_str());
    return 2;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ::unlink(path.c_str());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    std::perror("duet_notify_listen: bind");
    return 2;
  }
  std::printf("listening\n");
  std::fflush(stdout);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) != 1) {
      std::printf("timeout\n");
      return 1;
    }
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0) continue;
    const std::string message(buf, static_cast<size_t>(n));
    const std::string lines = "\n" + message + "\n";
    if (lines.find("\nREADY=1\n") != std::string::npos)
      std::printf("/ready=%d\n", ready_status(port));
    std::printf("%s\n", message.c_str());
    std::fflush(stdout);
    if (lines.find("\nSTOPPING=1\n") != std::string::npos) return 0;
  }
}
