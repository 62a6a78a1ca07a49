// CPU tests of what spends a lent GPU's minutes well (issue #37), with a fake device and a fake
// clock: pao-cuda-bench builds each case once for all its kernels, appends and flushes each row as
// it is measured (a killed or budget-stopped run keeps every row), --resume skips exactly the rows
// the CSV holds (quoted cells included), --budget-s stops between rows; a constant case filled on
// the device is make_decode_case's / make_prefix_case's case; pao-cuda-check's oracle side, run in
// parallel, gives the serial results in case order.
#include <doctest/doctest.h>
#include <omp.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_run.hpp"
#include "bench/filled_case.hpp"
#include "check/case_oracle.hpp"
#include "check/ordered_parallel.hpp"
#include "check/run_progress.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/cases/suite.hpp"
#include "pao/core/data_dir.hpp"
#include "pao/io/csv_read.hpp"

using namespace pao;
using namespace pao::cuda;
namespace fs = std::filesystem;

namespace {

/// A file name of its own under the temporary directory, removed at the end.
class TempCsv {
 public:
  explicit TempCsv(const std::string& name)
      : path_(fs::temp_directory_path() / ("pao-bench-run-" + std::to_string(::getpid()) + "-" + name)) {
    fs::remove(path_);
  }
  ~TempCsv() { fs::remove(path_); }
  std::string path() const { return path_.string(); }
  std::string text() const {
    std::ifstream in(path_, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  /// The data rows (records after the header).
  std::vector<CsvRecord> rows() const {
    std::vector<CsvRecord> r = read_csv_records(text(), path());
    if (!r.empty()) r.erase(r.begin());
    return r;
  }
  void write(const std::string& text) const { std::ofstream(path_, std::ios::binary) << text; }

 private:
  fs::path path_;
};

cases::Case decode_case(const std::string& id, std::int32_t num_seqs, std::int32_t seq_len) {
  cases::Case c;
  c.id = id;
  c.num_seqs = num_seqs;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_size = 64;
  c.block_size = 16;
  c.seq_lens.assign(static_cast<std::size_t>(num_seqs), seq_len);
  c.max_seq_len = seq_len;
  c.distribution = cases::ValueDistribution::constant;
  c.seed = 7;
  return c;
}

/// A device that counts what the loop asks, takes `row_s` seconds of the fake clock per
/// measurement and `build_s` per build, checks each time it is asked that the CSV already holds
/// every row measured before (flushed), and fails fatally at measurement `fatal_at` (a kill).
struct FakeDevice : bench::BenchDevice {
  double* now = nullptr;
  double row_s = 1, build_s = 0.5;
  const TempCsv* csv = nullptr;
  int fatal_at = -1;
  std::map<std::string, int> builds;  // by case id
  std::string prepared;
  int measured = 0, released = 0;

  void prepare(const cases::Case& c) override {
    ++builds[c.id];
    prepared = c.id;
    *now += build_s;
  }
  bench::BenchTiming measure(const cases::Case& kc, const BenchKernel& k) override {
    REQUIRE(kc.id == prepared);
    if (csv) CHECK(csv->rows().size() == static_cast<std::size_t>(measured));  // flushed, row by row
    if (measured == fatal_at) throw Error("the device is gone");
    ++measured;
    *now += row_s;
    bench::BenchTiming t;
    t.time_us = 10.0 + (k.variant == KernelVariant::v1 ? 0 : kc.partition_size / 256.0);
    t.repeats = 20;
    t.bytes = 1e6;
    return t;
  }
  void release() override { ++released; }
  bool fatal(const Error& e) const override { return std::string(e.what()) == "the device is gone"; }
};

struct Run {
  double now = 0;
  tools::BudgetClock clock;
  FakeDevice device;
  explicit Run(double budget_s = 0) : clock(budget_s, [this] { return now; }) { device.now = &now; }
};

bench::BenchRunOptions options() {
  bench::BenchRunOptions o;
  o.device_name = "Fake GPU, 1 SM";  // a comma: the cell is quoted
  o.peak_gbps = 100;
  return o;
}

std::vector<cases::Case> three_cases() {
  return {decode_case("decode-a", 2, 512), decode_case("decode-b", 1, 1024), decode_case("decode-c", 4, 256)};
}

const std::vector<BenchKernel> kKernels = parse_bench_kernels("v1,v2:256,v2:512");

bench::BenchRunSummary run(Run& r, const std::vector<cases::Case>& cs, const TempCsv& csv, bool resume) {
  bench::MeasurementCsvFile file(csv.path(), resume, "pao-cuda-bench on a fake GPU");
  std::FILE* null = std::getenv("PAO_TEST_BENCH_LOG") ? stderr : std::fopen("/dev/null", "w");
  bench::BenchRunSummary s = bench::run_bench(cs, kKernels, options(), file, r.device, r.clock, null, null);
  if (null != stderr) std::fclose(null);
  return s;
}

}  // namespace

TEST_CASE("pao-cuda-bench builds each case once for all its kernels and flushes every row as measured") {
  const TempCsv csv("once.csv");
  Run r;
  r.device.csv = &csv;
  const bench::BenchRunSummary s = run(r, three_cases(), csv, false);
  CHECK(s.rows == 9);
  CHECK(s.measured == 9);
  CHECK(s.builds == 3);
  CHECK(r.device.released == 3);
  for (const auto& [id, builds] : r.device.builds) {
    INFO(id);
    CHECK(builds == 1);
  }
  const std::vector<CsvRecord> rows = csv.rows();
  REQUIRE(rows.size() == 9);
  CHECK(rows[0].cells[0] == "Fake GPU, 1 SM");
  CHECK(rows[3].cells.back() == "decode-b");
  CHECK(csv.text().rfind("# pao-cuda-bench on a fake GPU\n" + bench::measurement_csv_header() + "\n", 0) ==
        0);
}

TEST_CASE("a pao-cuda-bench run killed mid-way keeps every row it measured, and --resume measures the rest") {
  const TempCsv csv("killed.csv");
  {
    Run r;
    r.device.csv = &csv;
    r.device.fatal_at = 4;  // the fifth measurement: the device is gone
    CHECK_THROWS_WITH(run(r, three_cases(), csv, false), "the device is gone");
  }
  CHECK(csv.rows().size() == 4);
  Run again;
  const bench::BenchRunSummary s = run(again, three_cases(), csv, true);
  CHECK(s.resumed == 4);
  CHECK(s.measured == 5);
  CHECK(again.device.builds.count("decode-a") == 0);  // every row there: not built again
  CHECK(again.device.builds["decode-b"] == 1);
  // Every row once.
  std::set<std::string> keys;
  const std::vector<CsvRecord> rows = csv.rows();
  CHECK(rows.size() == 9);
  const std::vector<std::string> header =
      read_csv_records(bench::measurement_csv_header(), "h").front().cells;
  for (const auto& row : rows) keys.insert(bench::measurement_row_key(header, row.cells));
  CHECK(keys.size() == 9);
}

TEST_CASE("--resume skips exactly the rows the CSV holds, quoted as a spreadsheet writes them") {
  const TempCsv csv("resume.csv");
  {
    Run r;
    run(r, three_cases(), csv, false);
  }
  // Keep the header and rows 1, 4 and 8, every cell quoted (pandas with quoting=QUOTE_ALL), a
  // comment and a blank line between them, CRLF line ends.
  const std::vector<CsvRecord> all = read_csv_records(csv.text(), csv.path());
  std::string text = "# rewritten\r\n";
  for (std::size_t i : {0, 1, 4, 8}) {
    std::string line;
    for (const auto& cell : all[i].cells) {
      std::string quoted = "\"";
      for (char ch : cell) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      line += (line.empty() ? "" : ",") + quoted + "\"";
    }
    text += line + "\r\n\r\n";
  }
  csv.write(text);
  Run r;
  const bench::BenchRunSummary s = run(r, three_cases(), csv, true);
  CHECK(s.resumed == 3);
  CHECK(s.measured == 6);
  CHECK(r.device.builds.size() == 3);  // each case has a row to measure
  CHECK(csv.rows().size() == 9);

  SUBCASE("a header that is not pao-cuda-bench's is refused") {
    csv.write("a,b\n1,2\n");
    CHECK_THROWS_WITH(bench::MeasurementCsvFile(csv.path(), true, "x"),
                      doctest::Contains("its header is not pao-cuda-bench's"));
  }
  SUBCASE("a last line cut short by a kill is dropped") {
    const std::string full = csv.text();
    csv.write(full.substr(0, full.size() - 7));  // the last row loses its end
    Run again;
    const bench::BenchRunSummary t = run(again, three_cases(), csv, true);
    CHECK(t.resumed == 8);
    CHECK(t.measured == 1);
    CHECK(csv.rows().size() == 9);
  }
  SUBCASE("without --resume the file starts anew") {
    Run again;
    CHECK(run(again, three_cases(), csv, false).measured == 9);
    CHECK(csv.rows().size() == 9);
  }
}

TEST_CASE("--budget-s stops pao-cuda-bench between rows when the next one would not finish") {
  const TempCsv csv("budget.csv");
  Run r(4.0);  // builds take 0.5 s, rows 1 s
  r.device.csv = &csv;
  const bench::BenchRunSummary s = run(r, three_cases(), csv, false);
  // 0.5 + 1 + 1 + 1 = 3.5 s after three rows; a fourth (1 s, plus 0.5 s to build the next case)
  // would end at 5 s.
  CHECK(s.stopped_by_budget);
  CHECK(s.measured == 3);
  CHECK(s.left == 6);
  CHECK(csv.rows().size() == 3);
  CHECK(r.device.released == 1);
  Run rest(100);
  const bench::BenchRunSummary t = run(rest, three_cases(), csv, true);
  CHECK_FALSE(t.stopped_by_budget);
  CHECK(t.measured == 6);
  CHECK(csv.rows().size() == 9);
  CHECK(tools::budget_stop_line("pao-cuda-bench", r.clock, 6, 9, "rows", "--resume measures them") ==
        "pao-cuda-bench: stopped by --budget-s 4.0 s after 3.5 s: 6 of 9 rows left (--resume measures them)");
}

TEST_CASE("the progress line counts, times and estimates what is left") {
  double now = 0;
  const tools::BudgetClock clock(0, [&] { return now; });
  tools::ProgressLine line(stderr, "pao-cuda-bench", 10, clock);
  now = 20;
  CHECK(line.line(4, "decode-a v1", 2.5) ==
        "pao-cuda-bench: [4/10] decode-a v1: 2.5 s; 20 s elapsed, ETA 30 s");
  now = 125;
  CHECK(line.line(10, "x", -1) == "pao-cuda-bench: [10/10] x; 2m05s elapsed");
  CHECK(tools::format_duration(7300) == "2h02m");
  CHECK(clock.allows(1e9));  // no budget
}

TEST_CASE("a constant bench case filled on the device is make_decode_case's case") {
  for (const auto& [cache, k_scale] : {std::pair{std::optional<DType>{}, 1.0}, {DType::fp8_e4m3, 0.5}}) {
    for (const DType dtype : {DType::f16, DType::f32, DType::bf16}) {
      cases::Case c = decode_case("filled", 3, 64);  // 4 blocks of 16 per sequence
      c.dtype = dtype;
      c.kv_cache_dtype = cache;
      c.k_scale = k_scale;
      c.alibi = true;
      c.num_blocks = 12;  // every slot used: no poison to differ
      c.extra_table_columns = 2;
      INFO(cases::case_to_json(c));
      REQUIRE(bench::fills_on_device(c));
      const bench::FilledDecodeCase f = bench::make_filled_decode_case(c);
      const cases::DecodeCase h = cases::make_decode_case(c);
      const auto same = [](const Tensor& a, const Tensor& b) {
        return a.dtype() == b.dtype() && a.shape() == b.shape() &&
               std::memcmp(a.bytes(), b.bytes(), a.nbytes()) == 0;
      };
      CHECK(same(bench::materialize(f.query), h.query));
      CHECK(same(bench::materialize(f.key_cache), h.key_cache));
      CHECK(same(bench::materialize(f.value_cache), h.value_cache));
      CHECK(same(f.block_tables, h.block_tables));
      CHECK(same(f.seq_lens, h.seq_lens));
      CHECK(same(f.alibi_slopes, h.alibi_slopes));
    }
  }
  cases::Case drawn = decode_case("drawn", 1, 16);
  drawn.distribution = cases::ValueDistribution::uniform;
  CHECK_FALSE(bench::fills_on_device(drawn));
  CHECK_THROWS_WITH(bench::make_filled_decode_case(drawn), doctest::Contains("not filled on the device"));
}

TEST_CASE("a constant prefix bench case filled on the device is make_prefix_case's case") {
  cases::Case c = decode_case("filled-prefix", 2, 64);
  c.kernel = cases::CaseKernel::prefix;
  c.query_lens = {16, 32};
  c.num_blocks = 8;
  c.max_query_len = 32;
  const bench::FilledPrefixCase f = bench::make_filled_prefix_case(c);
  const cases::PrefixCase h = cases::make_prefix_case(c);
  const auto same = [](const Tensor& a, const Tensor& b) {
    return a.shape() == b.shape() && std::memcmp(a.bytes(), b.bytes(), a.nbytes()) == 0;
  };
  CHECK(same(bench::materialize(f.query), h.query));
  CHECK(same(bench::materialize(f.key), h.key));
  CHECK(same(bench::materialize(f.value), h.value));
  CHECK(same(bench::materialize(f.key_cache), h.key_cache));
  CHECK(same(bench::materialize(f.value_cache), h.value_cache));
  CHECK(same(f.block_tables, h.block_tables));
}

TEST_CASE("pao-cuda-check's oracle side, in parallel, gives the serial results in case order") {
  const std::vector<cases::Case> cs = cases::expand_suite(data_dir() / "cases" / "smoke.json", false);
  REQUIRE(cs.size() > 4);
  const auto run_with = [&](int threads, std::size_t window) {
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<std::size_t> order;
    std::vector<check::CaseOracle> out;
    check::for_each_in_order<check::CaseOracle>(
        cs.size(), window, [&](std::size_t i) { return check::case_oracle(cs[i]); },
        [&](std::size_t i, check::CaseOracle&& o) {
          order.push_back(i);
          out.push_back(std::move(o));
          return true;
        },
        [] { return true; });
    omp_set_num_threads(before);
    for (std::size_t i = 0; i < order.size(); ++i) CHECK(order[i] == i);
    return out;
  };
  const std::vector<check::CaseOracle> serial = run_with(1, 1), parallel = run_with(4, 5);
  REQUIRE(serial.size() == cs.size());
  REQUIRE(parallel.size() == cs.size());
  for (std::size_t i = 0; i < cs.size(); ++i) {
    INFO(cs[i].id);
    CHECK(parallel[i].c.id == serial[i].c.id);
    CHECK(parallel[i].skip == serial[i].skip);
    CHECK(parallel[i].bad_case == serial[i].bad_case);
    REQUIRE(parallel[i].golden.tensors.size() == serial[i].golden.tensors.size());
    for (std::size_t t = 0; t < serial[i].golden.tensors.size(); ++t) {
      const auto& [name, a] = serial[i].golden.tensors[t];
      const auto& [pname, b] = parallel[i].golden.tensors[t];
      INFO(name);
      CHECK(pname == name);
      CHECK((a.nbytes() == b.nbytes() && std::memcmp(a.bytes(), b.bytes(), a.nbytes()) == 0));
    }
  }
}

TEST_CASE("items computed in parallel are used in order; a stop or an error ends the run there") {
  std::vector<std::size_t> seen;
  const auto consume_until = [&](std::size_t stop) {
    return [&seen, stop](std::size_t i, std::size_t&& v) {
      CHECK(v == i * i);
      seen.push_back(i);
      return i + 1 < stop;
    };
  };
  const auto square = [](std::size_t i) {
    if (i == 13) throw std::runtime_error("item 13");
    return i * i;
  };
  CHECK(check::for_each_in_order<std::size_t>(10, 3, square, consume_until(7), [] { return true; }) == 7);
  CHECK(seen == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6});
  seen.clear();
  int windows = 0;
  CHECK(check::for_each_in_order<std::size_t>(10, 4, square, consume_until(100),
                                              [&] { return ++windows <= 2; }) == 8);
  seen.clear();
  CHECK_THROWS_WITH(
      check::for_each_in_order<std::size_t>(20, 4, square, consume_until(100), [] { return true; }),
      "item 13");
  CHECK(seen.size() == 13);  // every item before the failing one was used
}
