#include "server/http_server.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "server/session.h"

namespace duet {

namespace net = boost::asio;
using tcp = net::ip::tcp;

std::optional<std::string_view> HttpRequest::header(std::string_view name) const {
  for (const HttpHeader& h : headers)
    if (iequals(h.name, name)) return std::string_view(h.value);
  return std::nullopt;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

struct HttpServer::Impl {
  Impl(HttpServerOptions options, RequestSink sink, ErrorFormatter errors, Logger& log)
      : shared{std::move(options), std::move(sink), std::move(errors), log},
        ioc(shared.options.io_threads),
        acceptor(net::make_strand(ioc)),
        signals(ioc, SIGINT, SIGTERM) {
    shared.id_prefix = std::random_device{}();
  }

  void accept() {
    acceptor.async_accept(
        net::make_strand(ioc), [this](boost::system::error_code ec, tcp::socket socket) {
          if (ec) {
            if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
            shared.log.warn("-", "accept failed: " + ec.message());
          } else {
            {
              // Accepted while stop() closes every session: it would not be in the list it
              // closes, and its read would keep the I/O threads busy.
              std::lock_guard<std::mutex> lock(sessions_mu);
              if (stopping) {
                boost::system::error_code ignored;
                socket.close(ignored);
                return;
              }
            }
            auto session = std::make_shared<Session>(std::move(socket), shared);
            const Admission admission = admit(*session);
            {
              std::lock_guard<std::mutex> lock(sessions_mu);
              // Forget sessions that are gone, so the list stays as long as the live ones.
              std::erase_if(sessions, [](const std::weak_ptr<Session>& w) { return w.expired(); });
              sessions.push_back(session);
            }
            session->start(admission);
          }
          accept();
        });
  }

  // Connections that do nothing must not lock others out. Over the total limit, or over the
  // limit of this client's address, the connection that has waited longest for a request
  // (of the server, or of that address) is closed to make room. If none is idle, the new
  // connection may still ask /health or /ready (a reserve of kProbeReserve connections), so
  // that probes see a busy server as alive; every other request gets 503 with Retry-After.
  Admission admit(const Session& incoming) {
    // The new session is counted already.
    const int total = shared.connections.load();
    int of_client = 0;
    {
      std::lock_guard<std::mutex> lock(shared.clients_mu);
      of_client = shared.per_client[incoming.address()];
    }
    const int per_client = shared.options.max_connections_per_client;
    const bool over_client = per_client > 0 && of_client > per_client;
    const bool over_total = total > shared.options.max_connections;
    if (!over_client && !over_total) return Admission::kServe;
    if (close_longest_idle(over_client ? &incoming.address() : nullptr)) return Admission::kServe;
    constexpr int kProbeReserve = 32;
    return shared.probe_only.load() < kProbeReserve ? Admission::kProbeOnly : Admission::kRefuse;
  }

  // Closes the live session idle the longest (of `address` when given). False if none is.
  bool close_longest_idle(const std::string* address) {
    std::shared_ptr<Session> oldest;
    int64_t oldest_since = 0;
    std::lock_guard<std::mutex> lock(sessions_mu);
    for (const auto& w : sessions) {
      auto s = w.lock();
      if (!s) continue;
      const int64_t since = s->idle_since();
      if (since == 0 || (address && s->address() != *address)) continue;
      if (!oldest || since < oldest_since) oldest = std::move(s), oldest_since = since;
    }
    if (!oldest) return false;
    oldest->close_if_idle();
    return true;
  }

  void wait_signal() {
    signals.async_wait([this](boost::system::error_code ec, int signo) {
      if (ec) return;
      if (on_signal) on_signal(signo);
      wait_signal();
    });
  }

  ServerShared shared;
  net::io_context ioc;
  tcp::acceptor acceptor;
  net::signal_set signals;
  std::function<void(int)> on_signal;
  std::vector<std::thread> threads;
  std::mutex sessions_mu;
  std::vector<std::weak_ptr<Session>> sessions;
  bool stopping = false;  // guarded by sessions_mu
  // I/O threads that returned from run() (stop() waits for all of them).
  std::mutex exit_mu;
  std::condition_variable exit_cv;
  int threads_exited = 0;
  uint16_t bound_port = 0;
  bool stopped = false;
};

HttpServer::HttpServer(HttpServerOptions options, RequestSink sink, ErrorFormatter errors,
                       Logger& log)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(sink), std::move(errors), log)) {}

HttpServer::~HttpServer() { stop(); }

Status HttpServer::start() {
  Impl& m = *impl_;
  boost::system::error_code ec;
  auto address = net::ip::make_address(
      m.shared.options.host == "localhost" ? std::string("127.0.0.1") : m.shared.options.host, ec);
  if (ec) return Status::error("--host '" + m.shared.options.host + "' is not an IP address");
  const tcp::endpoint endpoint(address, m.shared.options.port);
  m.acceptor.open(endpoint.protocol(), ec);
  if (!ec) m.acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) m.acceptor.bind(endpoint, ec);
  if (!ec) m.acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return Status::error("cannot listen on " + m.shared.options.host + ":" +
                         std::to_string(m.shared.options.port) + ": " + ec.message());
  m.bound_port = m.acceptor.local_endpoint(ec).port();
  m.accept();
  m.wait_signal();
  const int n = std::max(1, m.shared.options.io_threads);
  for (int i = 0; i < n; ++i)
    m.threads.emplace_back([&m] {
      m.ioc.run();
      std::lock_guard<std::mutex> lock(m.exit_mu);
      m.threads_exited++;
      m.exit_cv.notify_all();
    });
  return Status::ok();
}

uint16_t HttpServer::port() const { return impl_->bound_port; }

void HttpServer::on_signal(std::function<void(int)> fn) {
  // Set before start(); the handler runs on an I/O thread.
  impl_->on_signal = std::move(fn);
}

int HttpServer::open_connections() const { return impl_->shared.connections.load(); }
int HttpServer::writes_in_flight() const { return impl_->shared.writes_in_flight.load(); }

// Closes the listener and every connection, then lets the I/O threads run until nothing is
// left to do: every completion and posted handler runs (a request's last event, a session's
// close), so every object a handler holds is released before the threads end. Calling
// io_context::stop() at once instead would drop handlers that were queued, and with them the
// only code that breaks a request's ownership cycle (session <-> exchange <-> generation).
void HttpServer::stop() {
  Impl& m = *impl_;
  if (m.stopped) return;
  m.stopped = true;
  if (m.threads.empty()) return;  // never started
  net::post(m.acceptor.get_executor(), [&m] {
    boost::system::error_code ignored;
    m.acceptor.close(ignored);
    m.signals.cancel(ignored);
  });
  {
    std::lock_guard<std::mutex> lock(m.sessions_mu);
    m.stopping = true;
    for (auto& w : m.sessions)
      if (auto s = w.lock()) s->shutdown_from_server();
  }
  const int n = static_cast<int>(m.threads.size());
  bool ran_out = false;
  {
    std::unique_lock<std::mutex> lock(m.exit_mu);
    ran_out =
        m.exit_cv.wait_for(lock, std::chrono::seconds(5), [&] { return m.threads_exited == n; });
  }
  if (!ran_out) {
    // Something still waits (it should not: sockets are closed, timers cancelled). Stop the
    // threads, then run what was queued on this thread so that it is released all the same.
    m.shared.log.warn("-", "I/O work still pending at shutdown; stopping it");
    m.ioc.stop();
  }
  for (auto& t : m.threads)
    if (t.joinable()) t.join();
  m.threads.clear();
  if (!ran_out) {
    m.ioc.restart();
    m.ioc.poll();
  }
}

}  // namespace duet
