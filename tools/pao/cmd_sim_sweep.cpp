// `pao sim sweep`: time kernels over workload/kernel/device axes; CSV, SVG plot, crossovers.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>

#include "cli_parse.hpp"
#include "pao/core/error.hpp"
#include "pao/io/output_path.hpp"
#include "pao/sim/studies/svg.hpp"
#include "pao/sim/studies/sweep.hpp"
#include "sim_options.hpp"

namespace pao::cli::sim_commands {
using Action = std::function<int()>;

namespace {

/// The base workload, with the fields the sweep varies shown as swept instead of their base value
/// ("seqs=8 heads=32/8 hs=128 bs=16 len=swept f16").
std::string workload_header(const sim::SweepSpec& spec) {
  std::string text = spec.base.to_string();
  const std::pair<const char*, const char*> keys[] = {
      {"num-seqs", "seqs="}, {"num-heads", "heads="}, {"num-kv-heads", "heads="}, {"head-size", "hs="},
      {"block-size", "bs="}, {"seq-len", "len="},     {"max-seq-len", "len="},    {"query-len", "qlen="}};
  for (const auto& axis : spec.axes)
    for (const auto& [name, key] : keys) {
      if (axis.name != name) continue;
      const auto at = text.find(key);
      if (at == std::string::npos) continue;
      const auto end = text.find(' ', at);
      text.replace(at + std::strlen(key),
                   (end == std::string::npos ? text.size() : end) - at - std::strlen(key), "swept");
    }
  return text;
}

struct SweepOptions {
  sim::DeviceOptions device;
  sim::WorkloadOptions workload;
  sim::KernelOptions kernel_options;
  std::string kernels = "v1,v2:512,v2:1024";
  std::vector<std::string> axes;
  std::string csv_file;
  std::string svg_file;
  int jobs = 0;
  bool quiet = false;
};

std::string axis_value_text(const std::vector<sim::Axis>& axes, const std::vector<double>& values,
                            std::size_t from) {
  std::string s;
  for (std::size_t a = from; a < axes.size(); ++a) {
    char b[96];
    std::snprintf(b, sizeof b, "%s%s=%g", s.empty() ? "" : " ", axes[a].name.c_str(), values[a - from]);
    s += b;
  }
  return s;
}

int execute(const SweepOptions& o) {
  check_file_outputs({{"--csv", o.csv_file}, {"--svg", o.svg_file}},
                     {{"--device", o.device.device}, {"--case", o.workload.case_file}});
  sim::SweepSpec spec;
  spec.device = o.device.load();
  const cases::Case c = o.workload.to_case();
  spec.base = sim::workload_of(c);
  spec.threads = o.jobs;
  std::size_t pos = 0;
  const std::string& ks = o.kernels;
  while (pos <= ks.size()) {
    const auto comma = ks.find(',', pos);
    spec.kernels.push_back(
        sim::parse_kernel_spec(ks.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos),
                               o.kernel_options.defaults(o.workload.has_case() ? &c : nullptr)));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  require(!o.axes.empty(), "sweep: give at least one --axis, e.g. --axis seq-len=512:65536:x2");
  for (const auto& a : o.axes) spec.axes.push_back(sim::parse_axis(a));
  // A device field's values against the descriptor's ranges, before the sweep (not as a failed point each).
  for (const auto& axis : spec.axes)
    if (std::find(sim::workload_axis_names().begin(), sim::workload_axis_names().end(), axis.name) ==
        sim::workload_axis_names().end())
      for (const double v : axis.values) {
        sim::Device d = spec.device;
        try {
          sim::set_device_field(d, axis.name, v, "assumed", "--axis " + axis.name);
        } catch (const Error& e) {
          fail("--axis ", axis.name, ": ", e.what());
        }
      }

  const auto points = sim::run_sweep(spec);
  const std::string csv = sim::sweep_csv(spec, points);
  if (!o.csv_file.empty()) sim::write_text_file(o.csv_file, csv);
  const auto crossovers = sim::find_crossovers(spec, points);

  // The table: one row per axis combination, one column per kernel.
  const std::size_t nk = spec.kernels.size();
  if (!o.quiet) {
    std::printf("device %s\nworkload %s\n\n", spec.device.name.c_str(), workload_header(spec).c_str());
    std::string header;
    for (const auto& a : spec.axes) header += a.name + " ";
    std::printf("%-34s", header.c_str());
    for (const auto& k : spec.kernels) std::printf(" %14s", (k.label() + " us").c_str());
    std::printf("  best\n");
    for (std::size_t c = 0; c < points.size() / nk; ++c) {
      std::string vals;
      for (double v : points[c * nk].axis_values) {
        char b[32];
        std::snprintf(b, sizeof b, "%g ", v);
        vals += b;
      }
      std::printf("%-34s", vals.c_str());
      std::size_t best = nk;
      for (std::size_t k = 0; k < nk; ++k) {
        const auto& p = points[c * nk + k];
        if (p.ok)
          std::printf(" %14.1f", p.time_us);
        else
          std::printf(" %14s", "n/a");
        if (p.ok && (best == nk || p.time_us < points[c * nk + best].time_us)) best = k;
      }
      std::printf("  %s\n", best < nk ? spec.kernels[best].label().c_str() : "-");
    }
  }
  std::printf("\ncrossovers along %s:\n", spec.axes[0].name.c_str());
  std::size_t ties = 0;
  for (const auto& c : crossovers) {
    if (c.near_tie) {
      ++ties;
      continue;
    }
    const std::size_t above = c.faster_below == c.a ? c.b : c.a;
    std::printf("  %s ~ %.0f%s%s: %s is faster below, %s above\n", spec.axes[0].name.c_str(), c.at,
                c.other_values.empty() ? "" : " at ", axis_value_text(spec.axes, c.other_values, 1).c_str(),
                spec.kernels[c.faster_below].label().c_str(), spec.kernels[above].label().c_str());
  }
  if (crossovers.size() == ties) std::printf("  none in the swept range\n");
  if (ties > 0)
    std::printf("  (%zu more where the two stay within 2%% of each other: near-ties, not listed)\n", ties);
  std::size_t failed = 0;
  for (const auto& p : points) failed += p.ok ? 0 : 1;
  if (failed > 0) {
    for (const auto& p : points)
      if (!p.ok) {
        std::printf("\n%zu points do not run; the first: %s %s: %s\n", failed,
                    spec.kernels[p.kernel].label().c_str(),
                    axis_value_text(spec.axes, p.axis_values, 0).c_str(), p.error.c_str());
        break;
      }
  }

  if (!o.svg_file.empty()) {
    // Lines for the first few combinations of the other axes, one per kernel.
    sim::LinePlot plot;
    std::string swept;
    for (const auto& a : spec.axes) swept += (swept.empty() ? "" : ", ") + a.name;
    plot.title =
        "pao sim sweep on " + spec.device.name + ": " + spec.base.to_string() + " (swept: " + swept + ")";
    plot.x_label = spec.axes[0].name;
    plot.y_label = "time (us)";
    plot.log_x = spec.axes[0].geometric;
    plot.log_y = true;
    const std::size_t n0 = spec.axes[0].values.size();
    const std::size_t combos = points.size() / nk / n0;
    const std::size_t shown = std::min<std::size_t>(combos, 4);
    for (std::size_t o2 = 0; o2 < shown; ++o2) {
      for (std::size_t k = 0; k < nk; ++k) {
        sim::Series s;
        s.label = spec.kernels[k].label();
        if (combos > 1) {
          const auto& pv = points[(o2 * n0) * nk + k].axis_values;
          s.label += " " + axis_value_text(spec.axes, std::vector<double>(pv.begin() + 1, pv.end()), 1);
        }
        for (std::size_t i = 0; i < n0; ++i) {
          const auto& p = points[((o2 * n0) + i) * nk + k];
          s.x.push_back(p.axis_values[0]);
          s.y.push_back(p.ok ? p.time_us : std::nan(""));
        }
        plot.series.push_back(std::move(s));
      }
    }
    for (const auto& c : crossovers) {
      if (combos > 1 || c.near_tie) continue;  // markers only for the one plotted set
      plot.marker_x.push_back(c.at);
      plot.marker_label.push_back(spec.kernels[c.a].label() + "/" + spec.kernels[c.b].label());
    }
    sim::write_text_file(o.svg_file, sim::render_line_plot(plot));
    std::printf("\nplot: %s%s\n", o.svg_file.c_str(),
                combos > shown ? " (first 4 combinations of the other axes)" : "");
  }
  if (!o.csv_file.empty()) std::printf("csv:  %s (%zu rows)\n", o.csv_file.c_str(), points.size());
  if (failed == points.size()) {
    // As `pao sim run` on a kernel that does not fit: no time is not an answer.
    std::printf("no point of the sweep runs on %s: nothing was simulated, which is not a result\n",
                spec.device.name.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

void add_sweep(CLI::App& sim, Action& action) {
  auto opts = std::make_shared<SweepOptions>();
  CLI::App* cmd = sim.add_subcommand(
      "sweep", "time several kernels over workload, kernel or device axes; CSV, SVG plot, crossover points");
  opts->device.add_to(*cmd);
  cmd->add_option("--kernels", opts->kernels,
                  "comma-separated kernels: v1, v2[:PARTITION], prefix[:MxN], fallback[:TILE], each with an "
                  "optional @IMPLEMENTATION (@pao-cuda, @pao-cuda-pre38; see --implementation)")
      ->capture_default_str();
  cmd->add_option(
         "--axis", opts->axes,
         "NAME=LIST, repeatable (first axis = x of the plot). LIST: a,b,c | start:stop:xFACTOR | "
         "start:stop:+STEP. "
         "NAME: num-seqs num-heads num-kv-heads head-size block-size seq-len query-len max-seq-len "
         "partition-size threads regs block-m block-n fallback-tile, or a device field (num_sms, ...)")
      ->required();
  opts->kernel_options.add_to(*cmd);
  opts->workload.add_to(*cmd);
  cmd->add_option("--csv", opts->csv_file, "write every point as CSV");
  cmd->add_option("--svg", opts->svg_file, "write a plot of time against the first axis");
  cmd->add_option("--jobs,-j", opts->jobs,
                  "threads (default: OMP_NUM_THREADS or all cores); results do not depend on it")
      ->check(cli::finite_range(0, 4096));
  cmd->add_flag("--quiet,-q", opts->quiet, "print only the crossovers");
  cmd->footer(
      "\nexamples:\n"
      "  # where does V2 beat V1 on the BI-V100, and 512 vs 1024?\n"
      "  pao sim sweep -d bi-v100 --kernels v1,v2:512,v2:1024 --axis seq-len=256:131072:x2 --csv s.csv --svg "
      "s.svg\n"
      "  # the same against batch size, at three lengths\n"
      "  pao sim sweep --axis num-seqs=1:256:x2 --axis seq-len=2048,8192,32768\n"
      "  # what if the SM count changed?\n"
      "  pao sim sweep --kernels v2:512 --axis num_sms=4:64:x2 --seq-len 32768\n"
      "  # how bad is the host-loop fallback?\n"
      "  pao sim sweep --kernels v2:512,fallback:512 --axis seq-len=1024:131072:x4");
  cmd->callback([opts, &action] { action = [opts] { return execute(*opts); }; });
}

}  // namespace pao::cli::sim_commands
