// The one reader of JSON input (pao/io/json_read.hpp): limits checked before and during the parse,
// excerpts for error messages.
#include "pao/io/json_read.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "pao/core/error.hpp"

namespace pao {
namespace {

/// nlohmann's message, its "last read: '...'" (the offending token, which may be the whole of a
/// long string) cut to an excerpt.
std::string parse_error_text(const std::string& what) {
  constexpr std::string_view kLastRead = "last read: '";
  const auto at = what.find(kLastRead);
  if (at == std::string::npos) return excerpt(what, 2 * kExcerptChars);
  const std::size_t start = at + kLastRead.size();
  const std::size_t end = what.size() > start && what.back() == '\'' ? what.size() - 1 : what.size();
  return what.substr(0, start) + excerpt(std::string_view(what).substr(start, end - start)) +
         what.substr(end);
}

template <typename Json>
Json parse_limited(std::string_view text, std::string_view origin, const JsonLimits& limits) {
  require(text.size() <= limits.max_bytes, origin, ": ", text.size(),
          " bytes of JSON, more than the limit of ", limits.max_bytes, " bytes");
  std::vector<std::set<std::string>> keys_per_object;
  // Called before each container exists: `depth` counts the containers around it, so the parse
  // stops with at most max_depth levels built.
  auto check = [&](int depth, typename Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (depth >= limits.max_depth)
          fail(origin, ": JSON nests deeper than ", limits.max_depth, " levels (pao's limit for its inputs)");
        if (limits.unique_keys && event == Json::parse_event_t::object_start) keys_per_object.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        if (limits.unique_keys && !keys_per_object.empty()) keys_per_object.pop_back();
        break;
      case Json::parse_event_t::key:
        if (limits.unique_keys && !keys_per_object.empty() &&
            !keys_per_object.back().insert(parsed.template get<std::string>()).second)
          fail(origin, ": duplicate key '", excerpt(parsed.template get<std::string>()), "'");
        break;
      default:
        break;
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), check);
  } catch (const nlohmann::json::exception& e) {  // syntax, or a number out of range (1e400)
    fail(origin, ": invalid JSON: ", parse_error_text(e.what()));
  }
}

}  // namespace

nlohmann::json parse_json(std::string_view text, std::string_view origin, const JsonLimits& limits) {
  return parse_limited<nlohmann::json>(text, origin, limits);
}

nlohmann::ordered_json parse_ordered_json(std::string_view text, std::string_view origin,
                                          const JsonLimits& limits) {
  return parse_limited<nlohmann::ordered_json>(text, origin, limits);
}

std::string read_text_file(const std::filesystem::path& path, std::string_view origin,
                           std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(origin, ": cannot open the file");
  // Read in chunks rather than trust the size the filesystem reports (a pipe, /dev/zero).
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    require(text.size() + static_cast<std::size_t>(in.gcount()) <= max_bytes, origin,
            ": more than the limit of ", max_bytes, " bytes");
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
  }
  require(!in.bad(), origin, ": cannot read the file");
  return text;
}

std::string json_excerpt(const nlohmann::json& value, std::size_t max_chars) {
  return excerpt(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), max_chars);
}

std::string json_excerpt(const nlohmann::ordered_json& value, std::size_t max_chars) {
  return excerpt(value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace), max_chars);
}

}  // namespace pao
