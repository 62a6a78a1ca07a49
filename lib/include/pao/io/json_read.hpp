// The one reader of JSON input (case files, suites, golden metadata and manifests, device
// descriptors, safetensors headers): a size limit on the text and a nesting limit enforced while
// parsing, so a hostile value ("[[[[..." 100000 deep) is refused before it exists (dump(), copies
// and comparisons of a nlohmann value recurse once per level: such a value crashed pao), and
// errors that quote an input value quote an excerpt of at most ~200 characters. Parses of JSON
// that pao itself just wrote need none of this.
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "pao/core/excerpt.hpp"

namespace pao {

/// Deeper than any JSON pao reads (a case nests 3 levels, a suite 6), far below the depth at
/// which recursion over a parsed value runs out of stack.
inline constexpr int kJsonMaxDepth = 64;
/// The largest JSON text pao reads: shipped suites are a few KiB, a manifest of 100000 cases
/// about 40 MiB; a case, suite or manifest beyond it is refused before it is parsed.
inline constexpr std::size_t kJsonMaxBytes = std::size_t{64} << 20;

struct JsonLimits {
  std::size_t max_bytes = kJsonMaxBytes;
  /// Containers (objects and arrays) nested, the outermost counting 1.
  int max_depth = kJsonMaxDepth;
  /// Refuse an object that names a key twice (nlohmann would keep the last silently).
  bool unique_keys = false;
};

/// Parses `text`, or throws pao::Error "<origin>: invalid JSON: ..." / "<origin>: JSON nests
/// deeper than 64 levels ..." / "<origin>: ... bytes of JSON, more than ...". `origin` names the
/// file and what it is ("case a.json", "suite s.json grid 2").
nlohmann::json parse_json(std::string_view text, std::string_view origin, const JsonLimits& limits = {});
nlohmann::ordered_json parse_ordered_json(std::string_view text, std::string_view origin,
                                          const JsonLimits& limits = {});

/// The whole file as text, refusing one larger than `max_bytes` as soon as it has read that much
/// (a pipe or /dev/zero has no size to check first): "<origin>: cannot open the file" /
/// "<origin>: more than the limit of M bytes".
std::string read_text_file(const std::filesystem::path& path, std::string_view origin,
                           std::size_t max_bytes = kJsonMaxBytes);

/// excerpt() (pao/core/excerpt.hpp) of a JSON value as written (dump()).
std::string json_excerpt(const nlohmann::json& value, std::size_t max_chars = kExcerptChars);
std::string json_excerpt(const nlohmann::ordered_json& value, std::size_t max_chars = kExcerptChars);

}  // namespace pao
