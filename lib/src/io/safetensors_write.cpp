// safetensors writer: validates names and views, builds the header the official writer would,
// and streams header and data to memory or to an atomically written file.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "pao/core/error.hpp"
#include "pao/io/checked_size.hpp"
#include "pao/io/safetensors.hpp"
#include "pao/io/utf8.hpp"

namespace pao {
namespace {

/// Position of a dtype in the official writer's Dtype enum (the dtype table's safetensors_rank);
/// tensors are written in descending order of it (larger alignment first), then by name, so our
/// bytes equal the official writer's.
int official_dtype_rank(DType t) { return dtype_info(t).safetensors_rank; }

void require_utf8(std::string_view text, std::string_view what) {
  if (auto bad = find_invalid_utf8(text))
    fail(what, " is not valid UTF-8 (invalid byte at offset ", *bad, ")");
}

/// The header bytes (length prefix included) and the tensors in data order.
struct SafetensorsPlan {
  std::string header;
  std::vector<const std::pair<std::string, TensorView>*> order;
};

SafetensorsPlan plan_safetensors(const NamedTensorViews& tensors, const SafetensorsMetadata& metadata) {
  SafetensorsPlan plan;
  std::set<std::string_view> names;
  for (const auto& named : tensors) {
    const auto& [name, view] = named;
    require(!name.empty(), "safetensors: a tensor has an empty name");
    require(name != "__metadata__", "safetensors: \"__metadata__\" is reserved and cannot name a tensor");
    require_utf8(name, "safetensors: tensor name");
    require(names.insert(name).second, "safetensors: duplicate tensor name '", name, "'");
    require(view.shape.size() <= kSafetensorsMaxRank, "safetensors: tensor '", name, "' has rank ",
            view.shape.size(), ", more than ", kSafetensorsMaxRank);
    require(checked_tensor_bytes(view.shape, view.dtype).has_value(), "safetensors: tensor '", name,
            "' has a negative or too large dimension in shape ", shape_to_string(view.shape));
    require(view.strides.size() == view.shape.size(), "safetensors: tensor '", name, "' has shape ",
            shape_to_string(view.shape), " but strides ", shape_to_string(view.strides));
    require(view.numel() == 0 || view.data != nullptr, "safetensors: tensor '", name, "' has no data");
    plan.order.push_back(&named);
  }
  for (const auto& [key, value] : metadata) {
    require_utf8(key, "safetensors: __metadata__ key");
    require_utf8(value, "safetensors: __metadata__ value of '" + key + "'");
  }
  std::stable_sort(plan.order.begin(), plan.order.end(), [](const auto* a, const auto* b) {
    const int ra = official_dtype_rank(a->second.dtype), rb = official_dtype_rank(b->second.dtype);
    return ra != rb ? ra > rb : a->first < b->first;
  });

  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    auto& meta = json["__metadata__"] = nlohmann::ordered_json::object();
    for (const auto& [key, value] : metadata) meta[key] = value;
  }
  std::uint64_t offset = 0;
  for (const auto* named : plan.order) {
    const auto& [name, view] = *named;
    const std::uint64_t bytes = tensor_data_bytes(view);
    json[name] = {{"dtype", std::string(safetensors_dtype_name(view.dtype))},
                  {"shape", view.shape},
                  {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = json.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');  // the data starts 8-byte aligned
  require(text.size() <= kSafetensorsMaxHeaderBytes, "safetensors: the header would be ", text.size(),
          " bytes, over the limit of ", kSafetensorsMaxHeaderBytes);
  plan.header.resize(8);
  for (int i = 0; i < 8; ++i) plan.header[i] = static_cast<char>(std::uint64_t(text.size()) >> (8 * i));
  plan.header += text;
  return plan;
}

void write_plan(ByteSink& sink, const SafetensorsPlan& plan) {
  sink.write(plan.header);
  for (const auto* named : plan.order)
    write_tensor_data(sink, named->second, "safetensors: tensor '" + named->first + "'");
}

}  // namespace

std::vector<std::byte> encode_safetensors(const NamedTensorViews& tensors,
                                          const SafetensorsMetadata& metadata) {
  const SafetensorsPlan plan = plan_safetensors(tensors, metadata);
  VectorSink sink;
  write_plan(sink, plan);
  return std::move(sink.bytes());
}

WrittenFile write_safetensors(const std::filesystem::path& path, const NamedTensorViews& tensors,
                              const SafetensorsMetadata& metadata) {
  SafetensorsPlan plan;
  try {
    plan = plan_safetensors(tensors, metadata);
  } catch (const Error& e) {
    fail(path.string(), ": ", e.what());  // nothing was created
  }
  return write_file_atomically(path, [&](ByteSink& sink) { write_plan(sink, plan); });
}

}  // namespace pao
