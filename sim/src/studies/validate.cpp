// Validation against measurements (pao/sim/studies/validate.hpp).
#include "pao/sim/studies/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace pao::sim {

namespace {

bool is_v1(const Measurement& m) { return m.kernel.kind == KernelVariant::v1; }
bool is_v2(const Measurement& m) { return m.kernel.kind == KernelVariant::v2; }

/// The scores of `pred` (one per row) against the measured times, groups judged as `groups` say.
Scores score(const std::vector<Measurement>& measurements, const std::vector<ValidationRow>& rows,
             const std::vector<double>& pred, std::vector<GroupVerdict>& groups, bool logo) {
  Scores s;
  const ErrorReport e = error_report(measurements, pred);  // MAPE, max error, Spearman as calibrate has them
  s.rows = e.rows;
  s.mape = e.mape;
  s.max_error = e.max_error;
  s.spearman = e.spearman;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double m = rows[i].measurement->time_us, p = pred[i];
    s.max_factor = std::max(s.max_factor, std::max(p / m, m / p));
  }
  std::vector<double> meas;
  for (const auto& row : rows) meas.push_back(row.measurement->time_us);
  std::size_t right = 0;
  for (auto& g : groups) {
    std::size_t best_pred = g.rows.front(), best_meas = g.rows.front();
    double v1_meas = 0, v2_meas = 0, v1_pred = 0, v2_pred = 0;
    for (auto i : g.rows) {
      const Measurement& m = *rows[i].measurement;
      if (pred[i] < pred[best_pred]) best_pred = i;
      if (m.time_us < rows[best_meas].measurement->time_us) best_meas = i;
      if (is_v1(m)) v1_meas = m.time_us, v1_pred = pred[i];
      if (is_v2(m) && v2_meas == 0) v2_meas = m.time_us, v2_pred = pred[i];
    }
    (logo ? g.right_logo : g.right) = best_pred == best_meas;
    (logo ? g.pick_logo : g.pick) = best_pred;
    g.best = best_meas;
    if (g.rows.size() >= 2) {
      const double regret = group_regret(g.rows, meas, pred);
      (logo ? g.regret_logo : g.regret) = regret;
      ++s.regret_groups;
      s.mean_regret += regret;
      s.max_regret = std::max(s.max_regret, regret);
    }
    if (g.decisive) {
      ++s.decisions;
      right += best_pred == best_meas;
    }
    if (v1_meas > 0 && v2_meas > 0) {
      g.ratio_measured = v1_meas / v2_meas;
      (logo ? g.ratio_logo : g.ratio_predicted) = v1_pred / v2_pred;
      s.max_ratio_error = std::max(s.max_ratio_error, std::fabs((v1_pred / v2_pred) / g.ratio_measured - 1));
    }
  }
  s.decision_accuracy = s.decisions > 0 ? static_cast<double>(right) / static_cast<double>(s.decisions) : 0;
  if (s.regret_groups > 0) s.mean_regret /= static_cast<double>(s.regret_groups);
  return s;
}

}  // namespace

ValidationReport validate(const Device& device, const std::vector<Measurement>& rows,
                          const ValidationOptions& o, const std::string& origin) {
  ValidationReport r;
  std::map<std::size_t, std::size_t> group_index;  // Measurement::group -> r.groups
  for (const auto& m : rows) {
    ValidationRow row;
    row.measurement = &m;
    row.predicted = predict_time(device, m);
    r.rows.push_back(row);
    const auto [it, fresh] = group_index.emplace(m.group, r.groups.size());
    if (fresh) {
      GroupVerdict g;
      g.name = m.group_name;
      r.groups.push_back(std::move(g));
    }
    r.groups[it->second].rows.push_back(r.rows.size() - 1);
  }
  for (auto& g : r.groups) {
    double lo = 1e300, hi = 0;
    for (auto i : g.rows) {
      lo = std::min(lo, rows[i].time_us);
      hi = std::max(hi, rows[i].time_us);
    }
    g.decisive = g.rows.size() >= 2 && hi > lo * (1 + o.decision_margin);
  }
  std::vector<double> pred;
  for (const auto& row : r.rows) pred.push_back(row.predicted);
  r.uncalibrated = score(rows, r.rows, pred, r.groups, false);

  if (o.leave_one_group_out && r.groups.size() >= 2) {
    r.logo_run = true;
    CalibrationOptions copts = o.calibration;
    copts.holdout_fraction = 0;
    for (std::size_t k = 0; k < r.groups.size(); ++k) {
      if (o.on_fold) o.on_fold(k, r.groups.size());
      std::vector<Measurement> train;
      for (std::size_t g = 0; g < r.groups.size(); ++g)
        if (g != k)
          for (auto i : r.groups[g].rows) train.push_back(rows[i]);
      const CalibrationResult fit =
          calibrate(device, train, copts, origin + " without group " + r.groups[k].name);
      for (auto i : r.groups[k].rows) r.rows[i].predicted_logo = predict_time(fit.calibrated, rows[i]);
    }
    std::vector<double> logo;
    for (const auto& row : r.rows) logo.push_back(row.predicted_logo);
    r.logo = score(rows, r.rows, logo, r.groups, true);
  }
  return r;
}

namespace {

/// A group's name in a 44-column cell: long ones keep their start and their end, where case ids
/// differ ("gpgpusim-v100:decode-h~b16-f16-auto-constant-xc0-l2048-s0").
std::string group_cell(const std::string& name) {
  constexpr std::size_t kWidth = 44, kHead = 16;
  if (name.size() <= kWidth) return name;
  return name.substr(0, kHead) + "~" + name.substr(name.size() - (kWidth - kHead - 1));
}

/// "v1", "v2:512", "prefix", ...
std::string kernel_cell(const Measurement& m) {
  return m.kernel.kind == KernelVariant::v2 ? "v2:" + std::to_string(m.kernel.partition_size)
                                            : std::string(to_string(m.kernel.kind));
}

const char* verdict(bool decisive, bool right) { return !decisive ? "tie" : right ? "right" : "WRONG"; }

}  // namespace

std::string format_validation(const ValidationReport& r, const Device& device) {
  std::ostringstream os;
  char line[512];
  os << "device " << device.name << ": " << r.rows.size() << " measurements in " << r.groups.size()
     << " groups\n\n";
  std::snprintf(line, sizeof line, "%-44s %-8s %10s %10s %7s %10s %7s\n", "group", "kernel", "measured",
                "predicted", "error", "LOGO", "error");
  os << line;
  for (const auto& g : r.groups)
    for (auto i : g.rows) {
      const ValidationRow& row = r.rows[i];
      const Measurement& m = *row.measurement;
      const double meas = m.time_us;
      std::snprintf(line, sizeof line, "%-44s %-8s %9.1fus %9.1fus %+6.0f%% ", group_cell(g.name).c_str(),
                    kernel_cell(m).c_str(), meas, row.predicted, 100 * (row.predicted / meas - 1));
      os << line;
      if (r.logo_run) {
        std::snprintf(line, sizeof line, "%9.1fus %+6.0f%%", row.predicted_logo,
                      100 * (row.predicted_logo / meas - 1));
        os << line;
      }
      os << "\n";
    }
  os << "\n";
  // Decisions: the measured best, the model's pick and what following it costs.
  std::snprintf(line, sizeof line, "%-44s %-8s %-8s %7s %-6s %-8s %7s %-6s\n", "group (decision)", "best",
                "pick", "regret", "winner", "LOGO", "regret", "winner");
  os << line;
  for (const auto& g : r.groups) {
    if (g.rows.size() < 2) continue;
    const auto kernel_of = [&](std::size_t i) { return kernel_cell(*r.rows[i].measurement); };
    std::snprintf(line, sizeof line, "%-44s %-8s %-8s %6.1f%% %-6s", group_cell(g.name).c_str(),
                  kernel_of(g.best).c_str(), kernel_of(g.pick).c_str(), 100 * g.regret,
                  verdict(g.decisive, g.right));
    os << line;
    if (r.logo_run) {
      std::snprintf(line, sizeof line, " %-8s %6.1f%% %-6s", kernel_of(g.pick_logo).c_str(),
                    100 * g.regret_logo, verdict(g.decisive, g.right_logo));
      os << line;
    }
    os << "\n";
  }
  os << "\n";
  bool any_ratio = false;
  for (const auto& g : r.groups) any_ratio = any_ratio || g.ratio_measured != 0;
  if (any_ratio) {
    std::snprintf(line, sizeof line, "%-44s %9s %9s %9s\n", "group (V1/V2 time ratio)", "measured",
                  "predicted", "LOGO");
    os << line;
    for (const auto& g : r.groups) {
      if (g.ratio_measured == 0) continue;
      char logo_ratio[32] = "-";  // --no-logo: no LOGO fit, no ratio (not 0)
      if (r.logo_run) std::snprintf(logo_ratio, sizeof logo_ratio, "%.3f", g.ratio_logo);
      std::snprintf(line, sizeof line, "%-44s %9.3f %9.3f %9s\n", group_cell(g.name).c_str(),
                    g.ratio_measured, g.ratio_predicted, logo_ratio);
      os << line;
    }
    os << "\n";
  }
  const auto scores = [&](const char* what, const Scores& s) {
    std::snprintf(
        line, sizeof line,
        "%-16s MAPE %6.1f%%  max error %6.1f%%  max factor %5.2fx  Spearman %6.3f  right winner %zu "
        "of %zu decisive groups  regret mean %4.1f%% max %5.1f%% (%zu groups)  V1/V2 ratio error max "
        "%5.1f%%\n",
        what, 100 * s.mape, 100 * s.max_error, s.max_factor, s.spearman,
        static_cast<std::size_t>(std::lround(s.decision_accuracy * static_cast<double>(s.decisions))),
        s.decisions, 100 * s.mean_regret, 100 * s.max_regret, s.regret_groups, 100 * s.max_ratio_error);
    os << line;
  };
  scores("uncalibrated", r.uncalibrated);
  if (r.logo_run) scores("LOGO calibrated", r.logo);
  return os.str();
}

namespace {

nlohmann::ordered_json scores_json(const Scores& s) {
  nlohmann::ordered_json j = error_report_json(s);
  j["right_winners"] = std::lround(s.decision_accuracy * static_cast<double>(s.decisions));
  j["max_factor"] = s.max_factor;
  j["max_ratio_error"] = s.max_ratio_error;
  j["regret_groups"] = s.regret_groups;
  return j;
}

}  // namespace

std::string validation_json(const ValidationReport& r, const Device& device) {
  nlohmann::ordered_json j;
  j["device"] = device.name;
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : r.rows) {
    const Measurement& m = *row.measurement;
    nlohmann::ordered_json e;
    e["group"] = m.group_name;
    e["kernel"] = kernel_cell(m);
    e["line"] = m.line;
    e["measured_us"] = m.time_us;
    e["predicted_us"] = row.predicted;
    if (r.logo_run) e["predicted_logo_us"] = row.predicted_logo;
    j["rows"].push_back(e);
  }
  j["groups"] = nlohmann::ordered_json::array();
  for (const auto& g : r.groups) {
    nlohmann::ordered_json e;
    e["name"] = g.name;
    e["decisive"] = g.decisive;
    e["best"] = kernel_cell(*r.rows[g.best].measurement);
    e["pick"] = kernel_cell(*r.rows[g.pick].measurement);
    e["regret"] = g.regret;
    if (r.logo_run) {
      e["pick_logo"] = kernel_cell(*r.rows[g.pick_logo].measurement);
      e["regret_logo"] = g.regret_logo;
    }
    if (g.ratio_measured != 0) {
      e["v1_v2_ratio_measured"] = g.ratio_measured;
      e["v1_v2_ratio_predicted"] = g.ratio_predicted;
      if (r.logo_run) e["v1_v2_ratio_logo"] = g.ratio_logo;
    }
    j["groups"].push_back(e);
  }
  j["uncalibrated"] = scores_json(r.uncalibrated);
  if (r.logo_run) j["logo"] = scores_json(r.logo);
  return j.dump(2) + "\n";
}

}  // namespace pao::sim
