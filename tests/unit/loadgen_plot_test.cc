// The SVG plot of `duet bench serve`: round axis ticks and escaped text (the files are
// checked for well-formedness by tests/node/svg_check.mjs).
#include <gtest/gtest.h>

#include "loadgen/svg_plot.h"

namespace duet::loadgen {
namespace {

TEST(LoadgenPlot, NiceTicksCoverTheRangeInRoundSteps) {
  EXPECT_EQ(nice_ticks(1453.58, 6), (std::vector<double>{0, 500, 1000, 1500}));
  EXPECT_EQ(nice_ticks(40, 5), (std::vector<double>{0, 10, 20, 30, 40}));
  EXPECT_EQ(nice_ticks(2, 5, 1.0), (std::vector<double>{0, 1, 2}));  // counts: no half steps
  EXPECT_EQ(nice_ticks(0.07, 4), (std::vector<double>{0, 0.02, 0.04, 0.06, 0.08}));
}

TEST(LoadgenPlot, SvgEscapesTextAndHasBothPanels) {
  const std::string svg = render_distributions_svg(
      {{"Time to first token (ms)", {1, 2, 3}}, {"Inter-token latency (ms)", {}}}, "a<b & \"c\"");
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find("Time to first token (ms)"), std::string::npos);
  EXPECT_NE(svg.find("no samples"), std::string::npos);  // the empty panel says so
  EXPECT_NE(svg.find("a&lt;b &amp; &quot;c&quot;"), std::string::npos);
  EXPECT_EQ(svg.find("a<b"), std::string::npos);
}

}  // namespace
}  // namespace duet::loadgen
