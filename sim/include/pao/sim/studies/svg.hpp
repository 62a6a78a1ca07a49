// Plots written by hand as SVG (no plotting library): line plots for sweeps, heat maps for advice.
#pragma once

#include <string>
#include <vector>

namespace pao::sim {

struct Series {
  std::string label;
  std::vector<double> x, y;  // y = NaN: no point (e.g. the kernel does not fit); the line breaks
};

struct LinePlot {
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;
  std::vector<Series> series;
  std::vector<double> marker_x;  // vertical dashed lines (crossovers)
  std::vector<std::string> marker_label;
};

std::string render_line_plot(const LinePlot& plot);

struct HeatMap {
  std::string title, x_label, y_label;
  std::vector<std::string> x_labels, y_labels;  // columns, rows (row 0 drawn at the top)
  std::vector<std::vector<int>> category;       // [row][col] index into legend, -1 = none
  std::vector<std::vector<std::string>> text;   // [row][col] small text in the cell
  std::vector<std::string> legend;
};

std::string render_heat_map(const HeatMap& map);

/// Writes text to a file atomically (temp + rename); throws pao::Error naming the path.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace pao::sim
