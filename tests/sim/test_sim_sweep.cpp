// Sweeps (axes, crossovers, CSV), the Chrome trace and the SVG plots.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "pao/core/error.hpp"
#include "pao/core/memory.hpp"
#include "pao/sim/engine/chrome_trace.hpp"
#include "pao/sim/engine/engine.hpp"
#include "pao/sim/model/device.hpp"
#include "pao/sim/model/kernel_model.hpp"
#include "pao/sim/studies/svg.hpp"
#include "pao/sim/studies/sweep.hpp"

using namespace pao::sim;

TEST_CASE("sim sweep: axis specs") {
  Axis a = parse_axis("seq-len=512:4096:x2");
  CHECK(a.values == std::vector<double>{512, 1024, 2048, 4096});
  CHECK(a.geometric);
  a = parse_axis("num-seqs=1,2,8");
  CHECK(a.values == std::vector<double>{1, 2, 8});
  a = parse_axis("num_sms=8:32:+8");
  CHECK(a.values == std::vector<double>{8, 16, 24, 32});
  CHECK_FALSE(a.geometric);
  CHECK(parse_axis("device.dram_achievable_gbps=100,200").name == "dram_achievable_gbps");
  CHECK_THROWS_WITH_AS(parse_axis("seqlen=1,2"), doctest::Contains("unknown axis"), pao::Error);
  CHECK_THROWS_WITH_AS(parse_axis("seq-len=1:10:*2"), doctest::Contains("xFACTOR"), pao::Error);
  CHECK_THROWS_WITH_AS(parse_axis("seq-len"), doctest::Contains("NAME=LIST"), pao::Error);
}

TEST_CASE("sim sweep: axis values out of range are refused before the sweep (issue 41)") {
  for (const char* spec :
       {"seq-len=nan", "num_sms=nan", "seq-len=1,inf", "seq-len=1:inf:+1", "seq-len=1:nan:x2"})
    CHECK_THROWS_WITH_AS(parse_axis(spec), doctest::Contains("is not a finite number"), pao::Error);
  for (const char* spec : {"seq-len=-5,10", "num-heads=0", "block-size=1:4:+0.5", "num-seqs=1.5"})
    CHECK_THROWS_WITH_AS(parse_axis(spec), doctest::Contains("must be an integer in"), pao::Error);
  CHECK(parse_axis("seq-len=0,1").values == std::vector<double>{0, 1});  // an empty sequence is a length
  CHECK(parse_axis("regs=0,64").values == std::vector<double>{0, 64});   // 0: the model's default
  // A range of 1e18 values stops at the limit instead of generating them all.
  CHECK_THROWS_WITH_AS(parse_axis("seq-len=1:1e18:+1"), doctest::Contains("1..100000 values"), pao::Error);
  // The per-sequence lengths of every point, checked before any is built.
  pao::set_memory_limit("1M");
  CHECK_THROWS_WITH_AS(parse_axis("num-seqs=1,2000000000"), doctest::Contains("--axis num-seqs = 2000000000"),
                       pao::Error);
  pao::set_memory_limit("");
}

TEST_CASE("sim sweep: V1 against V2 on the BI-V100 crosses over once") {
  SweepSpec spec;
  spec.device = load_device("bi-v100");
  spec.base.num_seqs = 8;
  spec.base.seq_lens.assign(8, 1);
  spec.kernels = {parse_kernel_spec("v1", {}), parse_kernel_spec("v2:512", {})};
  spec.axes = {parse_axis("seq-len=256:8192:x2")};
  const auto points = run_sweep(spec);
  REQUIRE(points.size() == 12);
  const auto crossovers = find_crossovers(spec, points);
  REQUIRE(crossovers.size() == 1);
  // V1 wins short sequences (no reduce launch); V2 wins once 256 CTAs cannot hide V1's latency.
  CHECK(crossovers[0].faster_below == 0);
  CHECK(crossovers[0].at > 512);
  CHECK(crossovers[0].at < 4096);
  const std::string csv = sweep_csv(spec, points);
  CHECK(csv.rfind("seq-len,kernel,ok,time_us", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 13);
}

TEST_CASE("sim sweep: device axes change the device") {
  SweepSpec spec;
  spec.device = load_device("bi-v100");
  spec.base.num_seqs = 4;
  spec.base.seq_lens.assign(4, 8192);
  spec.kernels = {parse_kernel_spec("v2:512", {})};
  spec.axes = {parse_axis("num_sms=8,16,32")};
  const auto points = run_sweep(spec);
  REQUIRE(points.size() == 3);
  CHECK(points[0].time_us > points[1].time_us);
  CHECK(points[1].time_us > points[2].time_us);
}

TEST_CASE("sim trace: one process per SM, a slice per CTA, counters") {
  const Device d = load_device("bi-v100");
  Workload w;
  w.num_seqs = 3;
  w.num_heads = 8;
  w.num_kv_heads = 8;
  w.seq_lens = {1000, 2000, 10};
  const auto launches = build_launches(d, w, parse_kernel_spec("v2:512", {}));
  std::ostringstream os;
  SimResult r;
  {
    ChromeTraceWriter writer(os, {launches[0].name, launches[1].name});
    r = simulate(d, launches, &writer);
  }
  const auto j = nlohmann::json::parse(os.str());
  std::set<std::int64_t> sm_pids;
  std::size_t slices = 0, counters = 0, kernels = 0;
  double bytes = 0;
  for (const auto& e : j["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "X" && e["pid"] != 0) {
      ++slices;
      sm_pids.insert(e["pid"].get<std::int64_t>());
      CHECK(e["args"].contains("seq"));
      CHECK(e["args"].contains("partition"));
      bytes += e["args"]["bytes"].get<double>();
    }
    if (ph == "X" && e["pid"] == 0 && e["tid"] == 0) ++kernels;
    if (ph == "C") ++counters;
  }
  CHECK(slices == launches[0].ctas.size() + launches[1].ctas.size());
  CHECK(kernels == 2);
  CHECK(sm_pids.size() == 16);
  CHECK(counters > 0);
  CHECK(bytes == doctest::Approx(r.dram_bytes).epsilon(1e-6));
}

namespace {

/// A minimal XML reading of an SVG: every element with its attributes, in document order; throws
/// (via CHECK failures) nothing, returns false on the first rule broken: tags balanced and
/// properly nested, attribute values quoted, no raw '<' or '&' in text, one root <svg>.
struct SvgElement {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::string text;  // the text directly inside it
};
bool parse_svg(const std::string& s, std::vector<SvgElement>& out, std::string& why) {
  std::vector<std::size_t> open;  // indices into out
  std::size_t i = 0;
  int roots = 0;
  while (i < s.size()) {
    if (s[i] != '<') {
      const std::size_t end = s.find('<', i);
      const std::string text = s.substr(i, end - i);
      for (std::size_t k = 0; k < text.size(); ++k)
        if (text[k] == '&' && text.compare(k, 4, "&lt;") != 0 && text.compare(k, 4, "&gt;") != 0 &&
            text.compare(k, 5, "&amp;") != 0 && text.compare(k, 6, "&quot;") != 0)
          return why = "a raw '&' in text", false;
      if (!open.empty()) out[open.back()].text += text;
      if (end == std::string::npos) break;
      i = end;
      continue;
    }
    const std::size_t close = s.find('>', i);
    if (close == std::string::npos) return why = "an unterminated tag", false;
    std::string tag = s.substr(i + 1, close - i - 1);
    i = close + 1;
    if (tag.empty()) return why = "an empty tag", false;
    if (tag[0] == '/') {
      if (open.empty() || out[open.back()].name != tag.substr(1)) return why = "a mismatched </" + tag, false;
      open.pop_back();
      continue;
    }
    const bool self_closing = tag.back() == '/';
    if (self_closing) tag.pop_back();
    SvgElement e;
    std::size_t k = 0;
    while (k < tag.size() && tag[k] != ' ' && tag[k] != '\n') e.name += tag[k++];
    while (k < tag.size()) {
      while (k < tag.size() && (tag[k] == ' ' || tag[k] == '\n')) ++k;
      if (k == tag.size()) break;
      const std::size_t eq = tag.find('=', k);
      if (eq == std::string::npos || eq + 1 >= tag.size() || tag[eq + 1] != '"')
        return why = "an unquoted attribute in <" + e.name, false;
      const std::size_t end = tag.find('"', eq + 2);
      if (end == std::string::npos) return why = "an unterminated attribute in <" + e.name, false;
      e.attrs[tag.substr(k, eq - k)] = tag.substr(eq + 2, end - eq - 2);
      k = end + 1;
    }
    if (open.empty() && ++roots > 1) return why = "more than one root element", false;
    out.push_back(e);
    if (!self_closing) open.push_back(out.size() - 1);
  }
  if (!open.empty()) return why = "<" + out[open.back()].name + "> is never closed", false;
  if (out.empty() || out.front().name != "svg") return why = "the root is not <svg>", false;
  return true;
}

std::vector<const SvgElement*> elements(const std::vector<SvgElement>& all, const std::string& name) {
  std::vector<const SvgElement*> v;
  for (const auto& e : all)
    if (e.name == name) v.push_back(&e);
  return v;
}

}  // namespace

TEST_CASE("sim svg: plots are well-formed and draw every series, break and label") {
  LinePlot p;
  p.title = "t < u";
  p.log_x = p.log_y = true;
  p.series = {{"a", {1, 2, 4}, {10, 20, 40}}, {"b", {1, 2, 4}, {15, std::nan(""), 30}}};
  p.marker_x = {3};
  p.marker_label = {"a/b"};
  std::vector<SvgElement> svg;
  std::string why;
  REQUIRE_MESSAGE(parse_svg(render_line_plot(p), svg, why), why);
  const double W = std::stod(svg.front().attrs.at("width")), H = std::stod(svg.front().attrs.at("height"));
  // Series a: one polyline through its 3 points; b: broken at its NaN, two pieces of one point.
  const auto lines = elements(svg, "polyline");
  REQUIRE(lines.size() == 3);
  const auto points = [](const SvgElement* e) {
    std::vector<std::pair<double, double>> v;
    std::istringstream in(e->attrs.at("points"));
    double x, y;
    char comma;
    while (in >> x >> comma >> y) v.emplace_back(x, y);
    return v;
  };
  const auto a = points(lines[0]);
  REQUIRE(a.size() == 3);
  CHECK(a[0].first < a[1].first);  // x grows left to right
  CHECK(a[1].first < a[2].first);
  CHECK(a[0].second > a[1].second);  // y grows upwards
  CHECK(a[1].second > a[2].second);
  // Log axes: x = 1, 2, 4 are evenly spaced, as are y = 10, 20, 40.
  CHECK(a[1].first - a[0].first == doctest::Approx(a[2].first - a[1].first).epsilon(0.02));
  CHECK(a[0].second - a[1].second == doctest::Approx(a[1].second - a[2].second).epsilon(0.02));
  CHECK(points(lines[1]).size() == 1);
  CHECK(points(lines[2]).size() == 1);
  CHECK(elements(svg, "circle").size() == 5);  // every finite point is marked
  for (const auto* e : lines)
    for (const auto& [x, y] : points(e)) CHECK((x > 0 && x < W && y > 0 && y < H));
  std::vector<std::string> texts;
  for (const auto* t : elements(svg, "text")) texts.push_back(t->text);
  const auto has = [&](const std::string& t) {
    return std::find(texts.begin(), texts.end(), t) != texts.end();
  };
  CHECK(has("t &lt; u"));  // the title, escaped
  CHECK(has("a"));         // legend entries
  CHECK(has("b"));
  CHECK(has("a/b"));  // the marker

  HeatMap m;
  m.x_labels = {"512", "1024"};
  m.y_labels = {"1 x 8"};
  m.category = {{0, 1}};
  m.text = {{"=", "1.5x"}};
  m.legend = {"v1", "v2-512"};
  std::vector<SvgElement> heat;
  REQUIRE_MESSAGE(parse_svg(render_heat_map(m), heat, why), why);
  // The background, a cell per (row, column), a legend swatch per category.
  CHECK(elements(heat, "rect").size() == 1 + 2 + 2);
  texts.clear();
  for (const auto* t : elements(heat, "text")) texts.push_back(t->text);
  for (const char* t : {"512", "1024", "1 x 8", "=", "1.5x", "v1", "v2-512"}) CHECK_MESSAGE(has(t), t);
}
