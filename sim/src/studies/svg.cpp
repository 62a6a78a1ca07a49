// Hand-written SVG plots: axes with ticks (linear or log), polylines, a legend; heat maps.
#include "pao/sim/studies/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "pao/core/error.hpp"

namespace pao::sim {
namespace {

const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
constexpr int kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else
      o += c;
  }
  return o;
}

std::string num(double v) {
  char b[32];
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e6 || a < 1e-2))
    std::snprintf(b, sizeof b, "%.3g", v);
  else if (a >= 100 || std::floor(v) == v)
    std::snprintf(b, sizeof b, "%.0f", v);
  else
    std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

struct Scale {
  double lo, hi;
  bool log;
  double px0, px1;
  double operator()(double v) const {
    const double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi;
    const double x = log ? std::log10(v) : v;
    return px0 + (x - a) / (b - a) * (px1 - px0);
  }
  std::vector<double> ticks() const {
    std::vector<double> t;
    if (log) {
      // Powers of 2 when the range is narrow enough to label them, else powers of 10.
      const double span = std::log2(hi / lo);
      if (span <= 16) {
        for (double v = std::exp2(std::ceil(std::log2(lo))); v <= hi * (1 + 1e-9); v *= (span > 8 ? 4 : 2))
          t.push_back(v);
      } else {
        for (double v = std::pow(10, std::ceil(std::log10(lo))); v <= hi * (1 + 1e-9); v *= 10)
          t.push_back(v);
      }
    } else {
      const double raw = (hi - lo) / 6;
      const double mag = std::pow(10, std::floor(std::log10(raw)));
      double step = mag;
      for (double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * mag) {
          step = m * mag;
          break;
        }
      for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(v);
    }
    return t;
  }
};

Scale make_scale(std::vector<double> values, bool log, double px0, double px1) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : values) {
    if (!std::isfinite(v) || (log && v <= 0)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) lo = 1, hi = 10;
  if (lo == hi) {
    lo = log ? lo / 2 : lo - 1;
    hi = log ? hi * 2 : hi + 1;
  }
  if (log) {
    lo /= 1.15;
    hi *= 1.15;
  } else {
    const double pad = (hi - lo) * 0.05;
    lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad;
    hi += pad;
  }
  return Scale{lo, hi, log, px0, px1};
}

/// The <svg> element of a W x H picture with a white background.
void open_svg(std::ostream& o, double W, double H, int font_size) {
  o << R"(<svg xmlns="http://www.w3.org/2000/svg" width=")" << W << R"(" height=")" << H
    << R"(" font-family="sans-serif" font-size=")" << font_size << R"(">)"
    << "\n";
  o << R"(<rect width="100%" height="100%" fill="white"/>)"
    << "\n";
}

}  // namespace

std::string render_line_plot(const LinePlot& p) {
  const double W = 900, H = 560, left = 90, right = 220, top = 50, bottom = 70;
  std::vector<double> xs, ys;
  for (const auto& s : p.series) {
    xs.insert(xs.end(), s.x.begin(), s.x.end());
    ys.insert(ys.end(), s.y.begin(), s.y.end());
  }
  const Scale sx = make_scale(xs, p.log_x, left, W - right);
  const Scale sy = make_scale(ys, p.log_y, H - bottom, top);
  std::ostringstream o;
  open_svg(o, W, H, 12);
  o << R"(<text x=")" << W / 2 - right / 2 + left / 2 << R"(" y="28" text-anchor="middle" font-size="16">)"
    << esc(p.title) << "</text>\n";
  // Grid and ticks.
  for (double t : sx.ticks()) {
    const double x = sx(t);
    o << R"(<line x1=")" << x << R"(" y1=")" << top << R"(" x2=")" << x << R"(" y2=")" << H - bottom
      << R"(" stroke="#e5e5e5"/>)"
      << R"(<text x=")" << x << R"(" y=")" << H - bottom + 18 << R"(" text-anchor="middle">)" << num(t)
      << "</text>\n";
  }
  for (double t : sy.ticks()) {
    const double y = sy(t);
    o << R"(<line x1=")" << left << R"(" y1=")" << y << R"(" x2=")" << W - right << R"(" y2=")" << y
      << R"(" stroke="#e5e5e5"/>)"
      << R"(<text x=")" << left - 8 << R"(" y=")" << y + 4 << R"(" text-anchor="end">)" << num(t)
      << "</text>\n";
  }
  o << R"(<rect x=")" << left << R"(" y=")" << top << R"(" width=")" << W - right - left << R"(" height=")"
    << H - bottom - top << R"(" fill="none" stroke="black"/>)"
    << "\n";
  o << R"(<text x=")" << (left + W - right) / 2 << R"(" y=")" << H - 25 << R"(" text-anchor="middle">)"
    << esc(p.x_label) << (p.log_x ? " (log)" : "") << "</text>\n";
  o << R"(<text transform="translate(24,)" << (top + H - bottom) / 2
    << R"x() rotate(-90)" text-anchor="middle">)x" << esc(p.y_label) << (p.log_y ? " (log)" : "")
    << "</text>\n";
  // Crossover markers.
  for (std::size_t i = 0; i < p.marker_x.size(); ++i) {
    const double x = sx(p.marker_x[i]);
    if (x < left || x > W - right) continue;
    o << R"(<line x1=")" << x << R"(" y1=")" << top << R"(" x2=")" << x << R"(" y2=")" << H - bottom
      << R"(" stroke="#555" stroke-dasharray="4,4"/>)";
    if (i < p.marker_label.size())
      o << R"(<text x=")" << x + 3 << R"(" y=")" << top + 14 + 14 * static_cast<double>(i % 4)
        << R"(" font-size="10" fill="#555">)" << esc(p.marker_label[i]) << "</text>";
    o << "\n";
  }
  // Series: polylines broken at missing points.
  for (std::size_t si = 0; si < p.series.size(); ++si) {
    const auto& s = p.series[si];
    const char* color = kPalette[si % kPaletteSize];
    std::string points;
    auto flush = [&] {
      if (!points.empty())
        o << R"(<polyline fill="none" stroke=")" << color << R"(" stroke-width="2" points=")" << points
          << "\"/>\n";
      points.clear();
    };
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.y[i]) || (p.log_y && s.y[i] <= 0)) {
        flush();
        continue;
      }
      char b[64];
      std::snprintf(b, sizeof b, "%.1f,%.1f ", sx(s.x[i]), sy(s.y[i]));
      points += b;
      o << R"(<circle cx=")" << sx(s.x[i]) << R"(" cy=")" << sy(s.y[i]) << R"(" r="2.5" fill=")" << color
        << "\"/>";
    }
    flush();
    const double ly = top + 10 + 20 * static_cast<double>(si);
    o << R"(<line x1=")" << W - right + 15 << R"(" y1=")" << ly << R"(" x2=")" << W - right + 40
      << R"(" y2=")" << ly << R"(" stroke=")" << color << R"(" stroke-width="3"/>)"
      << R"(<text x=")" << W - right + 46 << R"(" y=")" << ly + 4 << "\">" << esc(s.label) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

std::string render_heat_map(const HeatMap& m) {
  const double cell_w = 64, cell_h = 26, left = 150, top = 60, legend_w = 200;
  const double W = left + cell_w * static_cast<double>(m.x_labels.size()) + legend_w;
  const double H = top + cell_h * static_cast<double>(m.y_labels.size()) + 70;
  std::ostringstream o;
  open_svg(o, W, H, 11);
  o << R"(<text x=")" << left << R"(" y="24" font-size="15">)" << esc(m.title) << "</text>\n";
  for (std::size_t c = 0; c < m.x_labels.size(); ++c)
    o << R"(<text x=")" << left + cell_w * (static_cast<double>(c) + 0.5) << R"(" y=")" << top - 8
      << R"(" text-anchor="middle">)" << esc(m.x_labels[c]) << "</text>\n";
  for (std::size_t r = 0; r < m.y_labels.size(); ++r) {
    const double y = top + cell_h * static_cast<double>(r);
    o << R"(<text x=")" << left - 6 << R"(" y=")" << y + cell_h / 2 + 4 << R"(" text-anchor="end">)"
      << esc(m.y_labels[r]) << "</text>\n";
    for (std::size_t c = 0; c < m.x_labels.size(); ++c) {
      const int cat = r < m.category.size() && c < m.category[r].size() ? m.category[r][c] : -1;
      const char* color = cat < 0 ? "#ffffff" : kPalette[cat % kPaletteSize];
      const double x = left + cell_w * static_cast<double>(c);
      o << R"(<rect x=")" << x << R"(" y=")" << y << R"(" width=")" << cell_w << R"(" height=")" << cell_h
        << R"(" fill=")" << color << R"(" fill-opacity="0.55" stroke="white"/>)";
      if (r < m.text.size() && c < m.text[r].size() && !m.text[r][c].empty())
        o << R"(<text x=")" << x + cell_w / 2 << R"(" y=")" << y + cell_h / 2 + 4
          << R"(" text-anchor="middle" font-size="10">)" << esc(m.text[r][c]) << "</text>";
      o << "\n";
    }
  }
  const double bottom = top + cell_h * static_cast<double>(m.y_labels.size());
  o << R"(<text x=")" << left + cell_w * static_cast<double>(m.x_labels.size()) / 2 << R"(" y=")"
    << bottom + 24 << R"(" text-anchor="middle">)" << esc(m.x_label) << "</text>\n";
  o << R"(<text x="10" y=")" << top - 8 << "\">" << esc(m.y_label) << "</text>\n";
  const double lx = left + cell_w * static_cast<double>(m.x_labels.size()) + 20;
  for (std::size_t i = 0; i < m.legend.size(); ++i) {
    const double y = top + 22 * static_cast<double>(i);
    o << R"(<rect x=")" << lx << R"(" y=")" << y << R"(" width="16" height="16" fill=")"
      << kPalette[i % kPaletteSize] << R"(" fill-opacity="0.55"/>)"
      << R"(<text x=")" << lx + 22 << R"(" y=")" << y + 12 << "\">" << esc(m.legend[i]) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

void write_text_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    require(static_cast<bool>(out), path, ": cannot open for writing");
    out << text;
    out.close();
    require(static_cast<bool>(out), path, ": write failed");
  }
  require(std::rename(tmp.c_str(), path.c_str()) == 0, path, ": cannot rename ", tmp, " into place");
}

}  // namespace pao::sim
