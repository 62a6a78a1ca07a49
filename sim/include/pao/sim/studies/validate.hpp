// Validation of a device model against measured kernel times (`pao sim validate`): per row and
// per group, predicted against measured, uncalibrated and with leave-one-group-out calibration
// (calibrate fitted on every group but one, scored on that one), and the numbers that say whether
// the simulator's V1-or-V2 answer can be trusted (docs/simulator.md, "Validation").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pao/sim/studies/calibrate.hpp"

namespace pao::sim {

struct ValidationRow {
  const Measurement* measurement = nullptr;
  double predicted = 0;       // uncalibrated
  double predicted_logo = 0;  // calibrated on the other groups (0 when not run)
};

struct GroupVerdict {
  std::string name;
  std::vector<std::size_t> rows;  // into ValidationReport::rows
  /// Two or more kernels whose measured times differ by more than `decision_margin`: a decision
  /// the simulator must get right.
  bool decisive = false;
  bool right = false, right_logo = false;  // the predicted fastest kernel is the measured one
  std::size_t best = 0;                    // the measured fastest row (into ValidationReport::rows)
  std::size_t pick = 0, pick_logo = 0;     // the row the model predicts fastest
  double regret = 0, regret_logo = 0;      // group_regret (calibrate.hpp): the pick's cost
  /// V1 / V2 time ratio (groups with both): measured, predicted, predicted after LOGO calibration.
  double ratio_measured = 0, ratio_predicted = 0, ratio_logo = 0;
};

/// ErrorReport's scores (its `decisions` counting only the decisive groups, its regret every group
/// with >= 2 kernels, decisive or not), and three more.
struct Scores : ErrorReport {
  double max_factor = 0;       // max over rows of max(pred / meas, meas / pred)
  double max_ratio_error = 0;  // max over groups with V1 and V2 of |pred ratio / meas ratio - 1|
  std::size_t regret_groups = 0;
};

struct ValidationOptions {
  double decision_margin = 0.05;  // measured kernels closer than this are a tie, not a decision
  bool leave_one_group_out = true;
  CalibrationOptions calibration;  // for the LOGO fits (its holdout_fraction is ignored)
  /// Called before each LOGO fit: (group index, group count).
  std::function<void(std::size_t, std::size_t)> on_fold;
};

struct ValidationReport {
  std::vector<ValidationRow> rows;
  std::vector<GroupVerdict> groups;
  Scores uncalibrated, logo;
  bool logo_run = false;
};

ValidationReport validate(const Device& device, const std::vector<Measurement>& rows,
                          const ValidationOptions& options, const std::string& origin);

/// The report as text: a row table, a group table (the measured best, the model's pick and its
/// regret, the V1/V2 ratios) and the scores.
std::string format_validation(const ValidationReport& report, const Device& device);

/// The report as JSON: {device, rows: [...], groups: [...], uncalibrated: {...}, logo: {...}}.
std::string validation_json(const ValidationReport& report, const Device& device);

}  // namespace pao::sim
