// `pao sim advise`: the simulated best decode kernel over a grid, scored against vLLM's and
// FlashAttention's rules; table, heat map, embeddable rule.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>

#include "cli_parse.hpp"
#include "pao/cases/case.hpp"
#include "pao/core/error.hpp"
#include "pao/core/excerpt.hpp"
#include "pao/core/memory.hpp"
#include "pao/io/output_path.hpp"
#include "pao/sim/engine/report.hpp"
#include "pao/sim/studies/advise.hpp"
#include "pao/sim/studies/svg.hpp"
#include "sim_options.hpp"

namespace pao::cli::sim_commands {
using Action = std::function<int()>;

namespace {

struct AdviseOptions {
  sim::DeviceOptions device;
  sim::KernelOptions kernel_options;
  std::string num_seqs = "1,4,16,64";
  std::string num_heads = "8,32,64";
  std::string max_seq_lens = "512,1024,2048,4096,8192,16384,32768";
  std::string partitions = "256,512,1024,2048";
  std::int32_t gqa = 1;
  std::int32_t head_size = 128;
  std::int32_t block_size = 16;
  std::string dtype = "f16";
  std::string kv_cache_dtype = "auto";
  std::string svg_file;
  std::string rule_json;
  int jobs = 0;
};

void print_score(const sim::RuleScore& s) {
  std::printf(
      "  %-36s right %5.1f%% (V1/V2 class %5.1f%%) of %zu cells; regret mean %5.1f%%, worst %5.1f%% at %s\n",
      s.name.c_str(), 100 * s.accuracy, 100 * s.class_accuracy, s.cells, 100 * s.mean_regret,
      100 * s.worst_regret, s.worst_cell.empty() ? "-" : s.worst_cell.c_str());
  if (s.cannot_run > 0)
    std::printf(
        "  %-36s its choice does not fit on the device in %zu cells (counted wrong, not in the regret)\n", "",
        s.cannot_run);
}

int execute(const AdviseOptions& o) {
  check_file_outputs({{"--svg", o.svg_file}, {"--rule-json", o.rule_json}}, {{"--device", o.device.device}});
  const sim::Device device = o.device.load();
  sim::AdviseGrid g;
  // Every grid value at least 1, checked here: the grid's cells are simulated on threads.
  const auto positive_list = [](const std::string& text, const char* option) {
    std::vector<std::int32_t> values = sim::parse_int_list(text, option);
    for (const auto v : values) require(v >= 1, option, " ", v, ": every value must be >= 1");
    return values;
  };
  g.num_seqs = positive_list(o.num_seqs, "--num-seqs");
  g.num_heads = positive_list(o.num_heads, "--num-heads");
  g.max_seq_lens = positive_list(o.max_seq_lens, "--max-seq-lens");
  g.partitions = positive_list(o.partitions, "--partitions");
  for (const auto n : g.num_seqs)  // every cell builds its lengths
    require_memory("--num-seqs " + std::to_string(n) + " (the per-sequence lengths of a cell)", 32.0 * n,
                   "lower --num-seqs");
  g.gqa_group = o.gqa;
  g.base.head_size = o.head_size;
  g.base.block_size = o.block_size;
  g.base.dtype = parse_dtype(o.dtype, "--dtype");
  cases::Case cache;  // the one reader of a kv_cache_dtype string (u4 included)
  cases::set_kv_cache_dtype(cache, o.kv_cache_dtype, "--kv-cache-dtype");
  g.base.kv_cache_dtype = cache.kv_cache_dtype.value_or(g.base.dtype);
  g.base.kv_quant = cache.kv_quant;
  g.kernel_defaults = o.kernel_options.defaults();
  g.threads = o.jobs;
  require(o.gqa >= 1, "--gqa = ", o.gqa, ": must be >= 1");
  for (auto h : g.num_heads)
    require(h % o.gqa == 0, "--num-heads ", h, " is not a multiple of --gqa ", o.gqa);

  const sim::AdviseResult r = sim::run_advise(device, g);

  std::printf("device %s; head_size %d, block_size %d, GQA group %d, %s\n\n",
              sim::device_summary(device).c_str(), o.head_size, o.block_size, o.gqa, o.dtype.c_str());
  std::printf("%6s %6s %8s", "seqs", "heads", "max_len");
  for (const auto& c : r.candidates) std::printf(" %11s", (c.label() + " us").c_str());
  std::printf("  %-9s %-9s %-9s %s\n", "best", "advised", "vLLM", "FlashAttention (us)");
  for (const auto& c : r.cells) {
    std::printf("%6d %6d %8d", c.num_seqs, c.num_heads, c.max_seq_len);
    for (double t : c.times) {
      if (std::isfinite(t))
        std::printf(" %11.1f", t);
      else
        std::printf(" %11s", "n/a");
    }
    char fa_time[32];
    if (std::isfinite(c.fa_time))
      std::snprintf(fa_time, sizeof fa_time, "%.1f", c.fa_time);
    else
      std::snprintf(fa_time, sizeof fa_time, "does not fit");
    const bool fits = std::isfinite(c.best_time());
    std::printf("  %-9s %-9s %-9s %s (%s)\n", fits ? r.candidates[c.best].label().c_str() : "-",
                fits ? r.candidates[c.advised].label().c_str() : "-", r.candidates[c.vllm].label().c_str(),
                c.fa.label().c_str(), fa_time);
  }
  if (r.refused_runs > 0)
    std::printf("\n%zu runs refused (shown n/a); the first: %s\n", r.refused_runs,
                shortened_message(r.first_refusal).c_str());
  std::printf("\nrules against the simulated optimum (right = within 2%% of the best time):\n");
  print_score(r.vllm);
  print_score(r.fa);
  std::printf(
      "\nadvised rule (the simplest kernel within 2%% of the best: V1, then V2-512, then by partition):\n%s",
      sim::advised_rule_table(r).c_str());

  if (!o.rule_json.empty()) {
    sim::write_text_file(o.rule_json, sim::advised_rule_json(r, device));
    std::printf("\nrule json: %s\n", o.rule_json.c_str());
  }
  if (!o.svg_file.empty()) {
    sim::HeatMap m;
    m.title =
        "pao sim advise on " + device.name + ": advised decode kernel (text: speedup over vLLM's choice)";
    m.x_label = "max_seq_len";
    m.y_label = "seqs x heads";
    for (const auto& c : r.candidates) m.legend.push_back(c.label());
    std::vector<std::int32_t> lens = g.max_seq_lens;
    for (auto l : lens) m.x_labels.push_back(std::to_string(l));
    for (std::size_t i = 0; i < r.cells.size(); i += lens.size()) {
      m.y_labels.push_back(std::to_string(r.cells[i].num_seqs) + " x " +
                           std::to_string(r.cells[i].num_heads));
      std::vector<int> cats;
      std::vector<std::string> texts;
      for (std::size_t j = 0; j < lens.size(); ++j) {
        const auto& c = r.cells[i + j];
        const bool ok = std::isfinite(c.best_time());
        cats.push_back(ok ? static_cast<int>(c.advised) : -1);
        char b[32];
        const double speedup = c.times[c.vllm] / c.times[c.advised];
        if (!ok)
          std::snprintf(b, sizeof b, "-");
        else if (!std::isfinite(speedup))
          std::snprintf(b, sizeof b, "vLLM n/a");
        else if (speedup < 1.02)
          std::snprintf(b, sizeof b, "=");
        else
          std::snprintf(b, sizeof b, "%.2fx", speedup);
        texts.emplace_back(b);
      }
      m.category.push_back(cats);
      m.text.push_back(texts);
    }
    sim::write_text_file(o.svg_file, sim::render_heat_map(m));
    std::printf("heat map: %s\n", o.svg_file.c_str());
  }
  if (std::none_of(r.cells.begin(), r.cells.end(),
                   [](const auto& c) { return std::isfinite(c.best_time()); })) {
    // As `pao sim run` on a kernel that does not fit: no time is not an answer.
    std::printf("no candidate kernel runs in any cell on %s: nothing was simulated, which is not a result\n",
                device.name.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

void add_advise(CLI::App& sim, Action& action) {
  auto opts = std::make_shared<AdviseOptions>();
  CLI::App* cmd = sim.add_subcommand(
      "advise",
      "best of V1 / V2-{256,512,1024,2048} over a (num_seqs, num_heads, max_seq_len) grid; scores vLLM's and "
      "FlashAttention's rules (accuracy, regret); table, heat map, embeddable rule");
  opts->device.add_to(*cmd);
  cmd->add_option("--num-seqs", opts->num_seqs, "grid: batch sizes")->capture_default_str();
  cmd->add_option("--num-heads", opts->num_heads, "grid: query heads")->capture_default_str();
  cmd->add_option("--max-seq-lens", opts->max_seq_lens, "grid: max_seq_len (every sequence this long)")
      ->capture_default_str();
  cmd->add_option("--partitions", opts->partitions, "V2 partition sizes to consider")->capture_default_str();
  const auto at_least_1 = cli::at_least(1);
  cmd->add_option("--gqa", opts->gqa, "query heads per KV head")->check(at_least_1)->capture_default_str();
  cmd->add_option("--head-size", opts->head_size, "head size")->check(at_least_1)->capture_default_str();
  cmd->add_option("--block-size", opts->block_size, "tokens per KV-cache block")
      ->check(at_least_1)
      ->capture_default_str();
  cmd->add_option("--dtype", opts->dtype, "activation dtype")->capture_default_str();
  cmd->add_option("--kv-cache-dtype", opts->kv_cache_dtype,
                  "KV cache dtype (" + cases::kv_cache_dtype_choices() + ", u4)")
      ->capture_default_str();
  cmd->add_option("--threads", opts->kernel_options.flags.threads_per_cta, "threads per decode CTA")
      ->check(at_least_1)
      ->capture_default_str();
  cmd->add_option("--svg", opts->svg_file, "write a heat map of the best kernel per cell");
  cmd->add_option("--rule-json", opts->rule_json, "write the advised rule as JSON for a serving engine");
  cmd->add_option("--jobs,-j", opts->jobs, "threads; 0: all cores (results do not depend on it)")
      ->check(cli::finite_range(0, 4096));
  cmd->footer(
      "\nexamples:\n"
      "  pao sim advise --device bi-v100 --svg advice.svg --rule-json advice.json\n"
      "  pao sim advise -d h200 --gqa 8 --num-heads 32,64 --max-seq-lens 1024,4096,16384,65536\n"
      "\nvLLM's rule: use_v1 = max_seq_len <= 8192 and (max_num_partitions == 1 or num_seqs*num_heads > "
      "512),\n"
      "with partition 512. FlashAttention-2: num_splits_heuristic(num_seqs*num_heads, 2*num_sms, "
      "ceil(len/block_n), 128)\n"
      "mapped to V2 with ceil(blocks/splits)*block_n tokens per partition (1 split = V1).");
  cmd->callback([opts, &action] { action = [opts] { return execute(*opts); }; });
}

}  // namespace pao::cli::sim_commands
