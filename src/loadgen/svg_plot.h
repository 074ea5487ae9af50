// --plot FILE.svg: the TTFT and inter-token-latency distributions drawn as two panels, each a
// histogram (count per bin) with the empirical CDF over it and the p50 / p99 marked. Plain
// hand-written SVG 1.1, so that it renders in browsers and on GitHub with nothing installed.
#pragma once

#include <string>
#include <vector>

namespace duet::loadgen {

struct PlotSeries {
  std::string title;           // "Time to first token"
  std::vector<double> values;  // milliseconds
};

// A complete SVG document. `caption` goes under the panels (server, model, date...).
std::string render_distributions_svg(const std::vector<PlotSeries>& panels,
                                     const std::string& caption);

// Tick positions for [0, max]: 1, 2 or 5 × 10^k steps (at least min_step), about `target`
// of them; the last one is at or above max.
std::vector<double> nice_ticks(double max, int target, double min_step = 0);

}  // namespace duet::loadgen
