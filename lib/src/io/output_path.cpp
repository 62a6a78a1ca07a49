// No output over an input (pao/io/output_path.hpp).
#include "pao/io/output_path.hpp"

#include <iterator>
#include <system_error>

#include "pao/core/error.hpp"

namespace pao {

namespace fs = std::filesystem;

fs::path resolved_path(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::absolute(p, ec), ec);
  if (ec) r = fs::absolute(p, ec).lexically_normal();
  if (!r.has_filename() && r.has_relative_path()) r = r.parent_path();
  return r;
}

bool strictly_inside(const fs::path& path, const fs::path& dir) {
  auto p = path.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++p)
    if (p == path.end() || *p != *d) return false;
  return p != path.end();
}

std::string output_over_input(std::string_view option, const fs::path& output, const InputPath& input) {
  std::error_code ec;
  // An input that is not there cannot be overwritten (a device named, not a descriptor file).
  if (output.empty() || input.path.empty() || !fs::exists(input.path, ec)) return "";
  const fs::path out = resolved_path(output), in = resolved_path(input.path);
  const bool same = out == in || fs::equivalent(output, input.path, ec);
  const std::string head = std::string(option) + " " + output.string() + ": ";
  if (same)
    return head + "that is " + std::string(input.role) + " (" + input.path.string() +
           "), which this command reads: writing it would destroy it; give another path";
  if (!fs::is_directory(input.path, ec) || !strictly_inside(out, in)) return "";
  if (!input.reads_whole_folder) {
    const fs::path ext = out.extension();
    const bool read_there = ext == ".safetensors" || ext == ".npy" || fs::is_directory(out, ec);
    if (!read_there) return "";
    return head + "a tensor file or folder inside " + input.path.string() + " (" + std::string(input.role) +
           "), which this command reads: name the report otherwise (e.g. report.json) or put it outside";
  }
  return head + "inside the folder " + input.path.string() + " (" + std::string(input.role) +
         "), which this command reads: give a path outside it";
}

void refuse_shared_outputs(std::initializer_list<OutputPath> outputs) {
  for (auto a = outputs.begin(); a != outputs.end(); ++a)
    for (auto b = std::next(a); b != outputs.end(); ++b)
      if (!a->path.empty() && !b->path.empty() && resolved_path(a->path) == resolved_path(b->path))
        fail(a->option, " ", a->path.string(), " and ", b->option, " ", b->path.string(),
             " are the same file: one output would overwrite the other; give each its own path");
}

void require_writable_file_path(std::string_view option, const fs::path& output) {
  if (output.empty()) return;
  std::error_code ec;
  const std::string head = std::string(option) + " " + output.string() + ": ";
  require(!fs::is_directory(output, ec), head, "is a folder; give a file path (e.g. ",
          (output / "report.json").string(), ")");
  const fs::path dir = output.has_parent_path() ? output.parent_path() : fs::path(".");
  require(fs::exists(dir, ec), head, "its folder ", dir.string(), " does not exist; create it first");
  require(fs::is_directory(dir, ec), head, dir.string(), " is not a folder");
}

void check_file_outputs(std::initializer_list<OutputPath> outputs, std::span<const InputPath> inputs) {
  for (const auto& o : outputs) refuse_output_over_input(o.option, o.path, inputs);
  refuse_shared_outputs(outputs);
  for (const auto& o : outputs) require_writable_file_path(o.option, o.path);
}

void refuse_output_over_input(std::string_view option, const fs::path& output,
                              std::span<const InputPath> inputs) {
  for (const auto& input : inputs)
    if (std::string why = output_over_input(option, output, input); !why.empty()) throw Error(why);
}

}  // namespace pao
