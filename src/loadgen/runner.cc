#include "loadgen/runner.h"

#include <boost/asio/steady_timer.hpp>
#include <cstdio>
#include <deque>
#include <nlohmann/json.hpp>

#include "loadgen/http_client.h"

namespace duet::loadgen {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
Clock::duration to_duration(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// One phase (warm-up or measured): planned requests released on time, at most `limit` open.
class Phase {
 public:
  Phase(net::io_context& ioc, const Endpoints& eps, const Target& target, const RunOptions& o,
        const std::vector<PlannedRequest>& plan, bool warmup)
      : ioc_(ioc),
        eps_(eps),
        target_(target),
        o_(o),
        plan_(plan),
        warmup_(warmup),
        timer_(ioc),
        progress_timer_(ioc) {}

  void run() {
    records_.resize(plan_.size());
    sent_.assign(plan_.size(), 0.0);
    if (plan_.empty()) return;
    t0_ = Clock::now();
    pump();
    if (o_.progress && !warmup_) tick();
    ioc_.run();
    ioc_.restart();
    if (o_.progress && !warmup_) print_progress(true);
  }

  std::vector<RequestRecord>& records() { return records_; }
  double duration_s() const { return seconds(last_done_ - t0_); }
  int max_in_flight() const { return max_in_flight_; }

 private:
  void pump() {
    const auto now = Clock::now();
    while (next_ < plan_.size() && t0_ + to_duration(plan_[next_].scheduled_s) <= now)
      ready_.push_back(next_++);
    while (!ready_.empty() && (o_.max_concurrency <= 0 || in_flight_ < o_.max_concurrency)) {
      launch(ready_.front());
      ready_.pop_front();
    }
    if (next_ < plan_.size() && !timer_armed_) {
      timer_armed_ = true;
      timer_.expires_at(t0_ + to_duration(plan_[next_].scheduled_s));
      timer_.async_wait([this](const boost::system::error_code&) {
        timer_armed_ = false;
        pump();
      });
    }
  }

  void launch(size_t i) {
    ++in_flight_;
    max_in_flight_ = std::max(max_in_flight_, in_flight_);
    RequestRecord rec;
    rec.plan = plan_[i];
    rec.warmup = warmup_;
    start_stream_request(
        ioc_, eps_, target_, request_body(plan_[i], o_.body), o_.timeout_s, std::move(rec),
        [this, i](Clock::time_point sent) { sent_[i] = seconds(sent - t0_); },
        [this, i](RequestRecord&& r) { on_done(i, std::move(r)); });
  }

  void on_done(size_t i, RequestRecord&& r) {
    r.sent_s = sent_[i];
    records_[i] = std::move(r);
    --in_flight_;
    ++done_;
    if (!records_[i].ok) ++errors_;
    last_done_ = Clock::now();
    if (done_ == plan_.size()) {
      progress_timer_.cancel();
      return;
    }
    pump();
  }

  void tick() {
    progress_timer_.expires_after(std::chrono::milliseconds(o_.progress_tty ? 250 : 1000));
    progress_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || done_ == plan_.size()) return;
      print_progress(false);
      tick();
    });
  }

  void print_progress(bool last) {
    const double elapsed = seconds(Clock::now() - t0_);
    const double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0.0;
    std::fprintf(stderr,
                 "%sbench serve: %zu/%zu done, %d in flight, %zu errors, %.2f req/s, %.1f s%s",
                 o_.progress_tty ? "\r\033[K" : "", done_, plan_.size(), in_flight_, errors_, rate,
                 elapsed, o_.progress_tty && !last ? "" : "\n");
    std::fflush(stderr);
  }

  net::io_context& ioc_;
  const Endpoints& eps_;
  const Target& target_;
  const RunOptions& o_;
  const std::vector<PlannedRequest>& plan_;
  bool warmup_;
  net::steady_timer timer_, progress_timer_;
  bool timer_armed_ = false;
  Clock::time_point t0_, last_done_;
  std::vector<RequestRecord> records_;
  std::vector<double> sent_;  // send times, by plan index
  std::deque<size_t> ready_;
  size_t next_ = 0, done_ = 0, errors_ = 0;
  int in_flight_ = 0, max_in_flight_ = 0;
};

Result<std::string> discover_model(net::io_context& ioc, const Endpoints& eps, const Target& t,
                                   double timeout_s, const std::string& url) {
  Result<HttpReply> reply = Status::error("no answer");
  start_get(ioc, eps, t, t.models_path, std::min(timeout_s, 30.0),
            [&](Result<HttpReply> r) { reply = std::move(r); });
  ioc.run();
  ioc.restart();
  if (!reply) return Status::error("cannot reach " + url + ": " + reply.message());
  if (reply->status != 200)
    return Status::error("GET " + t.models_path + " answered HTTP " +
                         std::to_string(reply->status) +
                         " (is --url an OpenAI-compatible server? --model skips this look-up)");
  nlohmann::json j = nlohmann::json::parse(reply->body, nullptr, false);
  if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty() &&
      j["data"][0].is_object() && j["data"][0].contains("id") && j["data"][0]["id"].is_string())
    return j["data"][0]["id"].get<std::string>();
  return Status::error("GET " + t.models_path + " lists no model; name one with --model");
}

}  // namespace

Result<RunResult> run_benchmark(const RunOptions& o, const std::vector<PlannedRequest>& warmup,
                                const std::vector<PlannedRequest>& plan) {
  auto target = parse_url(o.url);
  if (!target) return target.status();
  target->api_key = o.api_key;
  net::io_context ioc;
  boost::system::error_code ec;
  tcp::resolver resolver(ioc);
  const Endpoints eps = resolver.resolve(target->host, target->port, ec);
  if (ec) return Status::error("cannot resolve " + target->host + ": " + ec.message());

  RunResult result;
  RunOptions opts = o;
  if (opts.body.model.empty()) {
    auto model = discover_model(ioc, eps, *target, o.timeout_s, o.url);
    if (!model) return model.status();
    opts.body.model = *model;
  }
  result.model = opts.body.model;

  Phase warm(ioc, eps, *target, opts, warmup, true);
  warm.run();
  Phase measured(ioc, eps, *target, opts, plan, false);
  measured.run();
  result.records = std::move(warm.records());
  for (RequestRecord& r : measured.records()) result.records.push_back(std::move(r));
  result.duration_s = measured.duration_s();
  result.max_in_flight = measured.max_in_flight();
  return result;
}

}  // namespace duet::loadgen
