// The one rule for every output option of the tools (`--json`, `--junit`, `--svg`, `--out`, a
// folder of vendor files, a calibrated descriptor): no command writes over what it reads. An output
// that is an input, by whatever path names it, or that lies inside an input folder, is refused
// before anything is read or written.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace pao {

/// The absolute path with the symbolic links of its existing part resolved and "." / ".." removed;
/// no trailing separator. Two paths name one file when their resolved paths are equal.
std::filesystem::path resolved_path(const std::filesystem::path& path);

/// Whether `path` lies strictly inside the folder `dir` (both resolved).
bool strictly_inside(const std::filesystem::path& path, const std::filesystem::path& dir);

/// An input of a command, named as its usage names it ("GOLDEN", "--case", "-m").
struct InputPath {
  std::string_view role;
  std::filesystem::path path;  // empty: not given (skipped)
  /// A folder the command reads all of (a golden folder: its manifest lists what it holds). When
  /// false (a folder of vendor outputs, where pao diff reads the files named after cases and notes
  /// the others), an output inside it is refused only when it is a tensor file (.safetensors,
  /// .npy) or a folder the command could read: a report beside the outputs is fine.
  bool reads_whole_folder = true;
};

/// Throws pao::Error (exit status 2) naming `option`, `output` and the input when `output` is one of
/// `inputs` that exists (the same path after resolving ".", "..", symbolic links, or the same file
/// by a hard link) or lies inside one that is a folder. An empty `output` is not checked.
void refuse_output_over_input(std::string_view option, const std::filesystem::path& output,
                              std::span<const InputPath> inputs);
inline void refuse_output_over_input(std::string_view option, const std::filesystem::path& output,
                                     std::initializer_list<InputPath> inputs) {
  refuse_output_over_input(option, output, std::span<const InputPath>(inputs.begin(), inputs.size()));
}

/// An output option of a command and the path it names (empty: not given).
struct OutputPath {
  std::string_view option;
  std::filesystem::path path;
};

/// Throws pao::Error naming both options when two given outputs are the same file by any path
/// (`--csv s.csv --svg ./s.csv`): the second would overwrite the first.
void refuse_shared_outputs(std::initializer_list<OutputPath> outputs);

/// Throws pao::Error (exit status 2) naming `option` and `output` when a file cannot be written
/// there, checked before any work: `output` is a folder, or its folder does not exist (or is not a
/// folder). An empty `output` is not checked. For reports written at the end of a long run.
void require_writable_file_path(std::string_view option, const std::filesystem::path& output);

/// Every check of a command's file outputs (reports, plots, CSVs, traces), made before any work:
/// none over an input (refuse_output_over_input), no two on one file (refuse_shared_outputs), each
/// a file that can be written (require_writable_file_path). Empty paths are outputs not asked for.
void check_file_outputs(std::initializer_list<OutputPath> outputs, std::span<const InputPath> inputs);
inline void check_file_outputs(std::initializer_list<OutputPath> outputs,
                               std::initializer_list<InputPath> inputs) {
  check_file_outputs(outputs, std::span<const InputPath>(inputs.begin(), inputs.size()));
}

/// The message of refuse_output_over_input, or "" when `output` is not over `input`.
std::string output_over_input(std::string_view option, const std::filesystem::path& output,
                              const InputPath& input);

}  // namespace pao
