// Calibration: the measurement CSV, the metrics, and recovering known parameters from synthetic
// measurements.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "pao/core/error.hpp"
#include "pao/sim/model/device.hpp"
#include "pao/sim/studies/calibrate.hpp"

using namespace pao::sim;

namespace {

/// A small synthetic data set (cheap to simulate) from a device that plays the hardware.
std::string small_csv(const Device& truth) {
  std::ostringstream os;
  os << "# synthetic\nkernel,num_seqs,num_heads,head_size,seq_len,partition_size,time_us\n";
  // Batches of 1-4 sequences fill less than one wave: each launch pays one gap and one CTA dispatch,
  // and a fit can trade the two (gap + dispatch is all such rows fix). 16 and 64 sequences run
  // several waves, a dispatch each: with them the two separate.
  for (int seqs : {1, 2, 4, 16, 64})
    for (int len : {128, 512, 2048, 4096})
      for (const char* k : {"v1", "v2"}) {
        Measurement m;
        m.workload.num_seqs = seqs;
        m.workload.num_heads = 8;
        m.workload.num_kv_heads = 8;
        m.workload.seq_lens.assign(static_cast<std::size_t>(seqs), len);
        m.kernel = parse_kernel_spec(k, {});
        os << k << "," << seqs << ",8,128," << len << ",512," << predict_time(truth, m) << "\n";
      }
  return os.str();
}

}  // namespace

TEST_CASE("sim calibrate: Spearman") {
  CHECK(spearman({1, 2, 3, 4}, {10, 20, 30, 40}) == doctest::Approx(1));
  CHECK(spearman({1, 2, 3, 4}, {4, 3, 2, 1}) == doctest::Approx(-1));
  CHECK(spearman({1, 2, 2, 3}, {1, 2, 2, 3}) == doctest::Approx(1));
}

TEST_CASE("sim calibrate: CSV errors name the line and the column") {
  const std::string head = "kernel,num_seqs,num_heads,head_size,seq_len,time_us\n";
  CHECK_THROWS_WITH_AS(parse_measurements("kernel,num_seqs\nv1,1\n", "m.csv"),
                       doctest::Contains("missing required column"), pao::Error);
  CHECK_THROWS_WITH_AS(parse_measurements(head + "v1,1,8,128,100,abc\n", "m.csv"),
                       doctest::Contains("m.csv:2: time_us"), pao::Error);
  CHECK_THROWS_WITH_AS(parse_measurements(head + "v1,1,8,128,100\n", "m.csv"), doctest::Contains("5 cells"),
                       pao::Error);
  CHECK_THROWS_WITH_AS(parse_measurements("kernel,num_seqs,bogus\n", "m.csv"),
                       doctest::Contains("unknown column 'bogus'"), pao::Error);
  CHECK_THROWS_WITH_AS(parse_measurements(head + "v1,1,8,128,100,-5\n", "m.csv"),
                       doctest::Contains("m.csv:2: time_us = -5: must be a time in"), pao::Error);
  CHECK_THROWS_WITH_AS(parse_measurements(head, "m.csv"), doctest::Contains("no measurements"), pao::Error);
  CHECK_THROWS_WITH_AS(parse_measurements(head + "v9,1,8,128,100,5\n", "m.csv"),
                       doctest::Contains("m.csv:2: kernel: unknown kernel 'v9'"), pao::Error);
  CHECK_THROWS_WITH_AS(
      parse_measurements("kernel,num_seqs,num_heads,head_size,seq_len,time_us,kv_cache_dtype\n"
                         "v1,1,8,128,100,5,fp7\n",
                         "m.csv"),
      doctest::Contains("m.csv:2: kv_cache_dtype: "), pao::Error);
  const auto rows =
      parse_measurements("# c\n" + head + "v1,2,8,128,100,5.5\r\nv2:1024,2,8,128,100,6\n", "m.csv");
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].kernel.partition_size == 1024);
  CHECK(rows[0].group == rows[1].group);
}

TEST_CASE("sim calibrate: CSV values out of their range are refused at their line and column (issue 41)") {
  const std::string head = "kernel,num_seqs,num_heads,head_size,seq_len,time_us\n";
  // A subnormal time made every relative error infinite (validate: "MAPE inf%") and the fit NaN.
  for (const char* time : {"1e-320", "0", "1e-9", "1e300"})
    CHECK_THROWS_WITH_AS(
        parse_measurements(head + "v1,1,8,128,100," + time + "\n", "m.csv"),
        doctest::Contains(("m.csv:2: time_us = " + std::string(time) + ": must be a time in").c_str()),
        pao::Error);
  // Each integer column says its range, not "is not an integer".
  CHECK_THROWS_WITH_AS(parse_measurements(head + "v1,1,8,128,3000000000,10\n", "m.csv"),
                       doctest::Contains("m.csv:2: seq_len = 3000000000: out of range [0, 2147483647]"),
                       pao::Error);
  CHECK_THROWS_WITH_AS(parse_measurements(head + "v1,0,8,128,100,10\n", "m.csv"),
                       doctest::Contains("m.csv:2: num_seqs = 0: out of range [1, 1000000]"), pao::Error);
  CHECK_THROWS_WITH_AS(parse_measurements(head + "v1,1,-8,128,100,10\n", "m.csv"),
                       doctest::Contains("m.csv:2: num_heads = -8: out of range"), pao::Error);
  CHECK_THROWS_WITH_AS(parse_measurements(head + "v1,1,8,128,1.5,10\n", "m.csv"),
                       doctest::Contains("m.csv:2: seq_len: '1.5' is not an integer"), pao::Error);
  // In range, but no GPU holds its K/V cache, or too many CTAs to simulate at every step of a fit.
  CHECK_THROWS_WITH_AS(parse_measurements(head + "v1,1,8,128,2000000000,10\n", "m.csv"),
                       doctest::Contains("m.csv:2: seq_len = 2000000000"), pao::Error);
  CHECK_THROWS_WITH_AS(parse_measurements(head + "v1,1,8,128,2000000000,10\n", "m.csv"),
                       doctest::Contains("K/V cache"), pao::Error);
  CHECK_THROWS_WITH_AS(parse_measurements("kernel,num_seqs,num_heads,num_kv_heads,head_size,seq_len,time_us\n"
                                          "v1,1000000,65536,1,32,1,10\n",
                                          "m.csv"),
                       doctest::Contains("CTAs"), pao::Error);
}

TEST_CASE("sim calibrate: a measurement CSV as pandas or a spreadsheet writes it reads") {
  // pandas' df.to_csv(path): an unnamed index column, a quoted note holding commas and quotes,
  // CRLF line ends from a spreadsheet; the same rows as the plain file.
  const std::string plain =
      "kernel,num_seqs,num_heads,head_size,seq_len,time_us,note\nv1,2,8,128,100,5.5,x\nv2:1024,2,8,128,100,6,"
      "y\n";
  const std::string pandas =
      ",kernel,num_seqs,num_heads,head_size,seq_len,time_us,note\r\n0,v1,2,8,128,100,5.5,\"warm, L2 "
      "\"\"flushed\"\"\"\r\n1,v2:1024,2,8,128,100,6.0,\"two\nlines\"\r\n";
  const auto a = parse_measurements(plain, "plain.csv"), b = parse_measurements(pandas, "pandas.csv");
  REQUIRE(b.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(b[i].time_us == a[i].time_us);
    CHECK(b[i].kernel.label() == a[i].kernel.label());
    CHECK(b[i].workload.to_string() == a[i].workload.to_string());
  }
  CHECK(b[0].group == b[1].group);
  CHECK(b[1].line == 3);
  CHECK_THROWS_WITH_AS(parse_measurements("kernel,kernel,num_seqs\n", "m.csv"),
                       doctest::Contains("column 'kernel' is named twice"), pao::Error);
  CHECK_THROWS_WITH_AS(parse_measurements(plain + "v1,2,8,128,100,5,\"open\n", "m.csv"),
                       doctest::Contains("m.csv:4: a quoted field is never closed"), pao::Error);
}

TEST_CASE("sim calibrate: recovers known parameters from synthetic measurements") {
  const Device stock = load_device("bi-v100");
  Device truth = stock;
  set_device_field(truth, "dram_achievable_gbps", 800, "assumed", "test truth");
  set_device_field(truth, "iteration_latency_us", 0.6, "assumed", "test truth");
  set_device_field(truth, "cta_dispatch_overhead_us", 2.0, "assumed", "test truth");
  set_device_field(truth, "inter_kernel_gap_us", 5.0, "assumed", "test truth");
  const auto rows = parse_measurements(small_csv(truth), "synthetic");
  CalibrationOptions o;
  o.holdout_fraction = 0.25;
  const CalibrationResult r = calibrate(stock, rows, o, "synthetic");
  INFO("iterations " << r.iterations << ", train MAPE " << r.train_after.mape);
  CHECK(r.test_rows > 0);
  CHECK(r.test_after.mape < 0.01);
  CHECK(r.test_after.mape < r.test_before.mape);
  CHECK(r.test_after.spearman > 0.99);
  CHECK(r.calibrated.iteration_latency_us == doctest::Approx(0.6).epsilon(0.03));
  CHECK(r.calibrated.inter_kernel_gap_us == doctest::Approx(5.0).epsilon(0.05));
  CHECK(r.calibrated.cta_dispatch_overhead_us == doctest::Approx(2.0).epsilon(0.05));
  CHECK(r.calibrated.dram_achievable_gbps == doctest::Approx(800).epsilon(0.05));
  CHECK(r.calibrated.provenance.at("iteration_latency_us").confidence == "fitted");
  CHECK(r.calibrated.provenance.at("iteration_latency_us").source.find("synthetic") != std::string::npos);
  // The calibrated descriptor is a valid descriptor.
  const Device reloaded = parse_device(device_to_json(r.calibrated), "calibrated");
  CHECK(reloaded.iteration_latency_us == r.calibrated.iteration_latency_us);
}
