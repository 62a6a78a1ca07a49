// Sweeps (axes, crossovers, CSV), the Chrome trace and the SVG plots.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "pao/core/error.hpp"
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

TEST_CASE("sim svg: plots are well-formed") {
  LinePlot p;
  p.title = "t < u";
  p.log_x = p.log_y = true;
  p.series = {{"a", {1, 2, 4}, {10, 20, 40}}, {"b", {1, 2, 4}, {15, std::nan(""), 30}}};
  p.marker_x = {3};
  p.marker_label = {"a/b"};
  const std::string svg = render_line_plot(p);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("t &lt; u") != std::string::npos);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(std::count(svg.begin(), svg.end(), '<') > 20);
  HeatMap m;
  m.x_labels = {"512", "1024"};
  m.y_labels = {"1 x 8"};
  m.category = {{0, 1}};
  m.text = {{"=", "1.5x"}};
  m.legend = {"v1", "v2-512"};
  CHECK(render_heat_map(m).find("1.5x") != std::string::npos);
}
