// Progress of a step that takes seconds (loading and packing a model, forging, quantizing,
// a benchmark), on stderr. On a terminal one line is redrawn in place:
//   loading d-Q4_K_M.gguf  [##########          ]  49%  96/196 matrices  1.2 s, 1.3 s left
// and cleared when the step ends. Elsewhere (a log, a pipe) plain lines at each quarter:
//   loading d-Q4_K_M.gguf: 50% (98/196 matrices, 1.2 s)
// A step that ends within its first second shows nothing, so small models and tests stay quiet.
// Calls come from one thread (the one doing the step).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace duet {

class Progress {
 public:
  // `unit` names what is counted ("matrices", "tensors", "runs").
  Progress(std::string what, int64_t total, std::string unit);
  ~Progress() { finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void set(int64_t done);
  // For a step that learns its total as it goes (a callback that passes both).
  void set(int64_t done, int64_t total) {
    total_ = total < 1 ? 1 : total;
    set(done);
  }
  void advance(int64_t n = 1) { set(done_ + n); }
  // Clears the terminal line (or prints the last plain line); later calls do nothing.
  void finish();

  // Tests: the text of the terminal line for `done` after `seconds`.
  static std::string bar_line(const std::string& what, int64_t done, int64_t total,
                              const std::string& unit, double seconds);

 private:
  using Clock = std::chrono::steady_clock;
  double elapsed() const;

  std::string what_, unit_;
  int64_t total_, done_ = 0;
  bool tty_;
  bool finished_ = false;
  bool drawn_ = false;      // something was shown
  int quarters_shown_ = 0;  // plain lines: 25 %, 50 %, 75 %, 100 %
  Clock::time_point start_ = Clock::now(), last_draw_{};
};

}  // namespace duet
