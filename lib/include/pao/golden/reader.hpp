// Reading goldens and vendor outputs tensor by tensor: a safetensors file, or a folder of .npy
// files (a pao npy golden, whose meta.json declares each tensor's dtype, or a vendor's folder of
// `<name>.npy` files). Only the tensors asked for are read, so diffing a long-context golden does
// not load its KV cache.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pao/cases/case.hpp"
#include "pao/cases/case_tensors.hpp"
#include "pao/core/tensor.hpp"
#include "pao/golden/tensors.hpp"
#include "pao/io/safetensors.hpp"

namespace pao::golden {

class TensorFile {
 public:
  /// Opens a .safetensors file or an npy folder. Throws pao::Error naming the path if it is
  /// neither, or if its header / meta.json is malformed.
  static TensorFile open(const std::filesystem::path& path);
  /// Tensors held in memory (a golden just made, a GPU run's outputs), read the same way; `name`
  /// stands for the path in messages.
  static TensorFile in_memory(const std::string& name, SafetensorsMetadata metadata,
                              std::vector<std::pair<std::string, Tensor>> tensors);

  const std::filesystem::path& path() const { return path_; }
  bool is_npy() const { return npy_; }
  /// safetensors `__metadata__`, or meta.json's "metadata" (empty for a plain npy folder).
  const SafetensorsMetadata& metadata() const { return metadata_; }
  std::vector<std::string> names() const;
  bool has(const std::string& name) const;
  /// Reads one tensor. `expected` helps plain npy folders: a '<u2' or '|u1' array is read as the
  /// raw bits of `expected` when that is bf16 or fp8 (meta.json declarations win).
  Tensor read(const std::string& name, std::optional<DType> expected = std::nullopt) const;

 private:
  std::filesystem::path path_;
  bool npy_ = false;
  SafetensorsMetadata metadata_;
  std::shared_ptr<const ByteSource> source_;  // safetensors
  SafetensorsHeader header_;
  std::map<std::string, std::pair<std::filesystem::path, std::optional<DType>>>
      npy_files_;                                                              // name -> file, declared dtype
  std::shared_ptr<const std::vector<std::pair<std::string, Tensor>>> memory_;  // in_memory
};

/// The case a golden was made from (its metadata's "case"). Throws pao::Error if `file` is not
/// a pao golden.
cases::Case golden_case_of(const TensorFile& file);

/// Every tensor of a golden, with its case and metadata, as make_golden returned them; outputs
/// the file leaves out (`pao golden --outputs`) are recomputed from its inputs unless `complete`
/// is false.
GoldenTensors read_golden(const TensorFile& file, bool complete = true);

/// A copy of the golden's tensor `name`, or an empty tensor when it holds none (alibi_slopes
/// without ALiBi): how a golden's inputs are read back into a typed case.
Tensor input_copy(const GoldenTensors& golden, std::string_view name);

/// A golden's inputs as make_decode_case / make_prefix_case built them (copies), to run pao's
/// kernels on them again: the diff's exact V2 partials, the audit's legitimate variations.
cases::DecodeCase decode_case_of(const GoldenTensors& golden);
cases::PrefixCase prefix_case_of(const GoldenTensors& golden);
/// A write_and_attend golden's inputs with the new tokens written again: the step the attention reads.
cases::WriteAndAttendCase write_and_attend_case_of(const GoldenTensors& golden);

/// A golden file (.safetensors or npy folder) as a case ready to run, in one call: its inputs
/// (only those; its outputs are not read) and its case, so that `c.args()` are the DecodeArgs /
/// PrefixArgs the golden was made from — k_scale / v_scale, per-head scales, ALiBi, soft-cap and
/// window included — and `c.spec` (a KernelTuning) its kernel-precision tuning:
///   const auto c = pao::golden::load_decode_case("g/decode-....safetensors");
///   pao::DecodeOutputs o = pao::paged_attention_v1(c.args(), pao::Precision::kernel, c.spec);
///   // o.out is bit for bit the golden's v1.out
/// Throws pao::Error naming the file if it is not a pao golden, is a golden of another kernel,
/// or lacks an input.
cases::DecodeCase load_decode_case(const std::filesystem::path& path);
cases::PrefixCase load_prefix_case(const std::filesystem::path& path);

}  // namespace pao::golden
