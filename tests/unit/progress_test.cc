// base/progress.h: the terminal line's text (the bar, the share, the count, time left).
#include "base/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace duet {
namespace {

TEST(Progress, TerminalLineShowsBarShareCountAndTimeLeft) {
  EXPECT_EQ(Progress::bar_line("loading m.gguf", 98, 196, "matrices", 1.5),
            "loading m.gguf  [##########          ] 50%  98/196 matrices  1.5 s, 1.5 s left");
  EXPECT_EQ(Progress::bar_line("bench", 0, 4, "runs", 0.0),
            "bench  [                    ] 0%  0/4 runs  0.0 s");
  EXPECT_EQ(Progress::bar_line("forging", 7, 7, "tensors", 3.25),
            "forging  [####################] 100%  7/7 tensors  3.2 s");
}

TEST(Progress, CountsAreClampedToTheTotal) {
  EXPECT_EQ(Progress::bar_line("x", 9, 4, "runs", 1.0),
            "x  [####################] 100%  4/4 runs  1.0 s");
  EXPECT_EQ(Progress::bar_line("x", 3, 0, "runs", 1.0),
            "x  [####################] 100%  1/1 runs  1.0 s");
}

TEST(Progress, AQuickStepPrintsNothing) {
  testing::internal::CaptureStderr();
  {
    Progress p("quick", 10, "steps");
    for (int i = 1; i <= 10; ++i) p.set(i);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(Progress, ALongStepPrintsAPlainLineEachQuarterWhenNotATerminal) {
  testing::internal::CaptureStderr();  // not a terminal
  {
    Progress p("forging m.gguf", 0, "tensors");
    p.set(1, 8);  // within the first second: quiet
    std::this_thread::sleep_for(std::chrono::milliseconds(1050));
    p.set(3, 8);  // 37 %: the 25 % line
    p.set(4, 8);  // 50 %
    p.set(8, 8);  // 100 % (75 % is passed over, not printed late)
  }
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out.find("forging m.gguf: 25% (3/8 tensors, "), 0u) << out;
  EXPECT_NE(out.find("\nforging m.gguf: 50% (4/8 tensors, "), std::string::npos) << out;
  EXPECT_NE(out.find("\nforging m.gguf: 100% (8/8 tensors, "), std::string::npos) << out;
  EXPECT_EQ(out.find("75%"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 3) << out;
}

}  // namespace
}  // namespace duet
