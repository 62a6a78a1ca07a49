// The subcommands of the `pao` command-line tool. Each lives in its own cmd_*.cpp file, parses
// its own arguments (CLI11) and returns the process exit code.
#pragma once

namespace pao::cli {

/// `pao example`: one decode case on the embedded defaults; V1 vs V2, exact vs kernel precision.
int run_example(int argc, char** argv);
/// `pao sim`: the timing simulator (run, sweep, advise, calibrate).
int run_sim(int argc, char** argv);
int run_golden(int argc, char** argv);
int run_diff(int argc, char** argv);
/// `pao mutate`: vendor-style outputs from goldens, optionally with a planted bug.
int run_mutate(int argc, char** argv);
/// `pao verify`: manifest hashes, the invariants of attention, optionally a bit-for-bit rebuild.
int run_verify(int argc, char** argv);
/// `pao audit`: the detection matrix of pao diff over a suite (bugs caught, legitimate passed).
int run_audit(int argc, char** argv);

}  // namespace pao::cli
