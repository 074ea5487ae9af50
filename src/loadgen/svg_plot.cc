#include "loadgen/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "loadgen/stats.h"

namespace duet::loadgen {
namespace {

constexpr double kPanelW = 560, kPanelH = 330;  // one panel, margins included
constexpr double kLeft = 62, kRight = 56, kTop = 40, kBottom = 50;
constexpr int kBins = 40;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string label(double v) {
  char buf[32];
  if (v != 0 && std::fabs(v) < 0.1)
    std::snprintf(buf, sizeof buf, "%.3g", v);
  else
    std::snprintf(buf, sizeof buf, "%g", std::round(v * 100) / 100);
  return buf;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t')
          out += c;  // XML forbids most controls
    }
  }
  return out;
}

std::string text(double x, double y, const std::string& s, const char* anchor = "middle",
                 const char* extra = "") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\"" + extra +
         ">" + escape(s) + "</text>\n";
}

std::string line(double x1, double y1, double x2, double y2, const char* style) {
  return "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" +
         num(y2) + "\" " + style + "/>\n";
}

std::string panel(const PlotSeries& s, double ox, double oy) {
  const double x0 = ox + kLeft, x1 = ox + kPanelW - kRight;
  const double y0 = oy + kPanelH - kBottom, y1 = oy + kTop;  // y0: the x axis (bottom)
  std::string out = "<g>\n";
  out += text(ox + kPanelW / 2, oy + 22, s.title, "middle", " font-weight=\"bold\"");
  if (s.values.empty()) {
    out += text(ox + kPanelW / 2, oy + kPanelH / 2, "no samples");
    return out + "</g>\n";
  }
  std::vector<double> v = s.values;
  std::sort(v.begin(), v.end());
  const std::vector<double> xt = nice_ticks(std::max(v.back(), 1e-6), 6);
  const double xmax = xt.back();
  const double bin = xmax / kBins;
  std::vector<int> counts(kBins, 0);
  for (double x : v) counts[std::min(kBins - 1, static_cast<int>(x / bin))]++;
  const std::vector<double> yt =
      nice_ticks(*std::max_element(counts.begin(), counts.end()), 5, 1.0);  // counts: whole numbers
  const double ymax = yt.back();
  const auto px = [&](double x) { return x0 + (x1 - x0) * x / xmax; };
  const auto py = [&](double c) { return y0 - (y0 - y1) * c / ymax; };

  // Axes, ticks and grid.
  for (double t : xt) {
    out += line(px(t), y0, px(t), y0 + 5, "stroke=\"#333\"");
    out += text(px(t), y0 + 18, label(t));
  }
  for (double t : yt) {
    out += line(x0, py(t), x1, py(t), "stroke=\"#e4e4e4\"");
    out += text(x0 - 8, py(t) + 4, label(t), "end");
  }
  for (int p = 0; p <= 100; p += 25) {
    const double y = y0 - (y0 - y1) * p / 100.0;
    out += text(x1 + 8, y + 4, std::to_string(p) + "%", "start", " fill=\"#c0392b\"");
  }
  // Histogram bars.
  for (int b = 0; b < kBins; ++b) {
    if (!counts[b]) continue;
    out += "<rect x=\"" + num(px(b * bin)) + "\" y=\"" + num(py(counts[b])) + "\" width=\"" +
           num(std::max(0.5, px(bin) - px(0) - 1)) + "\" height=\"" + num(y0 - py(counts[b])) +
           "\" fill=\"#4a7bb7\"/>\n";
  }
  // Empirical CDF as a step line (right axis, 0-100%).
  std::string path = "M" + num(px(0)) + "," + num(y0);
  for (size_t i = 0; i < v.size(); ++i) {
    const double frac = static_cast<double>(i + 1) / static_cast<double>(v.size());
    path += " H" + num(px(v[i])) + " V" + num(y0 - (y0 - y1) * frac);
  }
  path += " H" + num(x1);
  out += "<path d=\"" + path + "\" fill=\"none\" stroke=\"#c0392b\" stroke-width=\"1.5\"/>\n";
  // p50 and p99.
  const double p50 = percentile_sorted(v, 50), p99 = percentile_sorted(v, 99);
  out += line(px(p50), y0, px(p50), y1, "stroke=\"#222\" stroke-dasharray=\"4,3\"");
  out += text(px(p50) + 3, y1 + 12, "p50 " + label(p50), "start", " font-size=\"11\"");
  out += line(px(p99), y0, px(p99), y1, "stroke=\"#222\" stroke-dasharray=\"2,3\"");
  out += text(px(p99) - 3, y1 + 26, "p99 " + label(p99), "end", " font-size=\"11\"");
  // Frame and axis titles.
  out += "<rect x=\"" + num(x0) + "\" y=\"" + num(y1) + "\" width=\"" + num(x1 - x0) +
         "\" height=\"" + num(y0 - y1) + "\" fill=\"none\" stroke=\"#333\"/>\n";
  out += text((x0 + x1) / 2, y0 + 38, "milliseconds (n = " + std::to_string(v.size()) + ")");
  out +=
      text(ox + 16, (y0 + y1) / 2, "count", "middle",
           (" transform=\"rotate(-90 " + num(ox + 16) + " " + num((y0 + y1) / 2) + ")\"").c_str());
  out += text(ox + kPanelW - 6, (y0 + y1) / 2, "cumulative", "middle",
              (" fill=\"#c0392b\" transform=\"rotate(90 " + num(ox + kPanelW - 6) + " " +
               num((y0 + y1) / 2) + ")\"")
                  .c_str());
  return out + "</g>\n";
}

}  // namespace

std::vector<double> nice_ticks(double max, int target, double min_step) {
  if (!(max > 0)) max = 1;
  const double raw = max / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  step = std::max(step, min_step);
  std::vector<double> ticks;
  for (int i = 0;; ++i) {
    const double t = i * step;
    ticks.push_back(t);
    if (t >= max * (1 - 1e-12)) break;
  }
  return ticks;
}

std::string render_distributions_svg(const std::vector<PlotSeries>& panels,
                                     const std::string& caption) {
  const double w = kPanelW * static_cast<double>(std::max<size_t>(1, panels.size()));
  const double h = kPanelH + 30;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + num(w) +
         "\" height=\"" + num(h) + "\" viewBox=\"0 0 " + num(w) + " " + num(h) +
         "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (size_t i = 0; i < panels.size(); ++i) out += panel(panels[i], kPanelW * i, 0);
  out += text(w / 2, h - 10, caption, "middle", " fill=\"#555\"");
  out += "</svg>\n";
  return out;
}

}  // namespace duet::loadgen
