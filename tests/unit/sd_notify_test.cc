// sd_notify: the datagram arrives whole on the socket $NOTIFY_SOCKET names (a path, or an
// abstract name), nothing is sent without the variable, and an address that cannot be one is
// an error, not a crash.
#include "server/sd_notify.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <string>

namespace duet {
namespace {

// A unix datagram socket bound to `name` ("@..." for the abstract namespace), as systemd's.
class Receiver {
 public:
  explicit Receiver(const std::string& name) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, name.data(), name.size());
    socklen_t len = offsetof(sockaddr_un, sun_path) + name.size();
    if (name[0] == '@') {
      addr.sun_path[0] = '\0';
    } else {
      len += 1;
    }
    bound_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0;
  }
  ~Receiver() { ::close(fd_); }
  bool bound() const { return bound_; }
  // The next datagram, or "(none)" when none comes within a second.
  std::string receive() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 1000) != 1) return "(none)";
    char buf[512];
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    return n < 0 ? "(error)" : std::string(buf, static_cast<size_t>(n));
  }

 private:
  int fd_ = -1;
  bool bound_ = false;
};

class SdNotify : public ::testing::Test {
 protected:
  void TearDown() override { ::unsetenv("NOTIFY_SOCKET"); }
};

TEST_F(SdNotify, SendsTheStateToTheSocketPath) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("duet_notify_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "notify").string();
  {
    Receiver r(path);
    ASSERT_TRUE(r.bound());
    ::setenv("NOTIFY_SOCKET", path.c_str(), 1);
    ASSERT_TRUE(sd_notify("READY=1\nSTATUS=serving"));
    EXPECT_EQ(r.receive(), "READY=1\nSTATUS=serving");
    ASSERT_TRUE(sd_notify("STOPPING=1"));
    EXPECT_EQ(r.receive(), "STOPPING=1");
  }
  std::filesystem::remove_all(dir);
}

TEST_F(SdNotify, SendsToAnAbstractSocket) {
  const std::string name = "@duet-notify-test-" + std::to_string(::getpid());
  Receiver r(name);
  ASSERT_TRUE(r.bound());
  ::setenv("NOTIFY_SOCKET", name.c_str(), 1);
  ASSERT_TRUE(sd_notify("READY=1"));
  EXPECT_EQ(r.receive(), "READY=1");
}

TEST_F(SdNotify, NothingToDoWithoutTheVariable) {
  ::unsetenv("NOTIFY_SOCKET");
  EXPECT_TRUE(sd_notify("READY=1"));
  ::setenv("NOTIFY_SOCKET", "", 1);
  EXPECT_TRUE(sd_notify("READY=1"));
}

TEST_F(SdNotify, BadAddressesAreErrors) {
  ::setenv("NOTIFY_SOCKET", "relative/path", 1);
  EXPECT_FALSE(sd_notify("READY=1"));
  ::setenv("NOTIFY_SOCKET", ("/" + std::string(200, 'x')).c_str(), 1);
  Status s = sd_notify("READY=1");
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("longer than"), std::string::npos) << s.message();
  // Nobody listening there.
  ::setenv("NOTIFY_SOCKET", "/nonexistent-dir-for-duet/notify", 1);
  EXPECT_FALSE(sd_notify("READY=1"));
}

}  // namespace
}  // namespace duet
