// .npy reader: the magic and version, the Python-literal header dict (exactly the keys descr,
// fortran_order, shape), the descr, and the data size, all checked before allocating.
#include <cstring>
#include <limits>
#include <set>

#include "pao/core/error.hpp"
#include "pao/io/checked_size.hpp"
#include "pao/io/npy.hpp"

namespace pao {
namespace {

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

/// A reader of the header dict numpy writes: {'descr': '<f4', 'fortran_order': False,
/// 'shape': (2, 3), }. Only the literals that can appear there are accepted; no nesting.
class HeaderDictParser {
 public:
  HeaderDictParser(std::string_view text, std::string prefix) : text_(text), prefix_(std::move(prefix)) {}

  NpyHeader parse() {
    NpyHeader header;
    std::set<std::string> seen;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = parse_string("a key");
      require(seen.insert(key).second, prefix_, "duplicate key '", key, "' in the header dict");
      expect(':');
      skip_space();
      if (key == "descr") {
        require(peek() == '\'' || peek() == '"', prefix_,
                "descr is not a string (structured dtypes are not supported)");
        header.descr = parse_string("descr");
      } else if (key == "fortran_order") {
        header.fortran_order = parse_bool();
      } else if (key == "shape") {
        header.shape = parse_shape();
      } else {
        fail(prefix_, "unexpected key '", key, "' in the header dict (expected descr, fortran_order, shape)");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      require(peek() == '}', prefix_, "header dict: expected ',' or '}' at header byte ", pos_);
    }
    ++pos_;
    skip_space();
    require(pos_ == text_.size(), prefix_, "header dict: unexpected bytes after '}' at header byte ", pos_);
    for (const char* key : {"descr", "fortran_order", "shape"})
      require(seen.count(key) == 1, prefix_, "header dict is missing the key '", key, "'");
    return header;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c) {
    skip_space();
    require(peek() == c, prefix_, "header dict: expected '", c, "' at header byte ", pos_);
    ++pos_;
  }
  std::string parse_string(const char* what) {
    skip_space();
    const char quote = peek();
    require(quote == '\'' || quote == '"', prefix_, "header dict: expected ", what,
            " (a quoted string) at header byte ", pos_);
    const std::size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      require(text_[pos_] != '\\', prefix_, "header dict: escape sequences are not supported (header byte ",
              pos_, ")");
      ++pos_;
    }
    require(pos_ < text_.size(), prefix_, "header dict: unterminated string");
    return std::string(text_.substr(start, pos_++ - start));
  }
  bool parse_bool() {
    for (auto [word, value] :
         {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}})
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    fail(prefix_, "header dict: fortran_order is not True or False (header byte ", pos_, ")");
  }
  Shape parse_shape() {
    require(peek() == '(', prefix_, "header dict: shape is not a tuple (header byte ", pos_, ")");
    ++pos_;
    Shape shape;
    bool trailing_comma = false;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      require(shape.size() < kNpyMaxRank, prefix_, "shape has more than ", kNpyMaxRank, " dimensions");
      require(peek() != '-', prefix_, "shape[", shape.size(), "] is negative");
      require(peek() >= '0' && peek() <= '9', prefix_, "header dict: shape[", shape.size(),
              "] is not an integer (header byte ", pos_, ")");
      std::int64_t value = 0;
      while (peek() >= '0' && peek() <= '9') {
        const int digit = peek() - '0';
        require(value <= (std::numeric_limits<std::int64_t>::max() - digit) / 10, prefix_, "shape[",
                shape.size(), "] is too large");
        value = value * 10 + digit;
        ++pos_;
      }
      shape.push_back(value);
      trailing_comma = false;
      skip_space();
      if (peek() == ',') {
        ++pos_;
        trailing_comma = true;
        continue;
      }
      require(peek() == ')', prefix_, "header dict: expected ',' or ')' in shape at header byte ", pos_);
    }
    // Python needs the trailing comma for a one-element tuple: (5) is the integer 5.
    require(shape.size() != 1 || trailing_comma, prefix_, "header dict: shape is not a tuple");
    ++pos_;
    return shape;
  }

  std::string_view text_;
  std::string prefix_;
  std::size_t pos_ = 0;
};

/// The dtype a descr stores; `raw16` for '<u2' (bf16 bits, the only meaning pao gives it).
struct StoredType {
  std::optional<DType> dtype;
  bool raw16 = false;
};

StoredType parse_descr(const std::string& descr, const std::string& prefix) {
  struct Kind {
    std::string_view code;
    std::optional<DType> dtype;
    std::size_t bytes;
  };
  static constexpr Kind kKinds[] = {{"f8", DType::f64, 8}, {"f4", DType::f32, 4},  {"f2", DType::f16, 2},
                                    {"i4", DType::i32, 4}, {"i8", DType::i64, 8},  {"u1", DType::u8, 1},
                                    {"i1", DType::i8, 1},  {"u2", std::nullopt, 2}};
  const Kind* kind = nullptr;
  if (descr.size() == 3)
    for (const auto& k : kKinds)
      if (descr.substr(1) == k.code) kind = &k;
  require(kind != nullptr, prefix, "unsupported descr '", descr,
          "' (supported: <f8 <f4 <f2 <i4 <i8 |u1 |i1 <u2)");
  const char order = descr[0];
  require(order != '>' || kind->bytes == 1, prefix, "descr '", descr,
          "' is big-endian; only little-endian data is supported");
  require(order == '<' || (kind->bytes == 1 && (order == '|' || order == '>')), prefix, "descr '", descr,
          "' has byte order '", order, "'; expected '<' (or '|' for one-byte types)");
  return {kind->dtype, !kind->dtype.has_value()};
}

DType resolve_dtype(const StoredType& stored, const std::string& descr, std::optional<DType> declared,
                    const std::string& prefix) {
  if (!declared) {
    require(!stored.raw16, prefix, "descr '", descr,
            "' holds raw 16-bit words (bf16 bits); pass the declared dtype (bf16) to read it");
    return *stored.dtype;
  }
  if (*declared == DType::bf16) {
    require(stored.raw16, prefix, "declared dtype bf16 needs raw '<u2' bits, but the descr is '", descr, "'");
  } else if (is_fp8(*declared)) {
    require(stored.dtype == DType::u8, prefix, "declared dtype ", dtype_name(*declared),
            " needs raw '|u1' bits, but the descr is '", descr, "'");
  } else {
    require(stored.dtype == *declared, prefix, "declared dtype ", dtype_name(*declared),
            " does not match the descr '", descr, "'");
  }
  return *declared;
}

}  // namespace

Tensor read_npy(const ByteSource& source, std::optional<DType> declared) {
  const std::string prefix = source.name() + ": ";
  const std::uint64_t size = source.size();
  require(size >= 10, prefix, "truncated: ", size, " bytes is too short for an .npy header");
  unsigned char start[12] = {};
  source.read(0, start, 8);
  require(std::memcmp(start, "\x93NUMPY", 6) == 0, prefix, "not an .npy file (bad magic)");
  const int major = start[6], minor = start[7];
  require((major == 1 || major == 2 || major == 3) && minor == 0, prefix, "unsupported .npy format version ",
          major, ".", minor, " (supported: 1.0, 2.0, 3.0)");
  const std::uint64_t prefix_bytes = major == 1 ? 10 : 12;
  require(size >= prefix_bytes, prefix, "truncated: ", size, " bytes is too short for an .npy header");
  source.read(8, start + 8, prefix_bytes - 8);
  std::uint64_t header_len = std::uint64_t(start[8]) | std::uint64_t(start[9]) << 8;
  if (major != 1) header_len |= std::uint64_t(start[10]) << 16 | std::uint64_t(start[11]) << 24;
  require(header_len <= kNpyMaxHeaderBytes, prefix, "header length ", header_len, " is over the limit of ",
          kNpyMaxHeaderBytes, " bytes");
  require(header_len <= size - prefix_bytes, prefix, "header length ", header_len,
          " runs beyond the end of the file (", size, " bytes)");

  std::string text(static_cast<std::size_t>(header_len), '\0');
  source.read(prefix_bytes, text.data(), text.size());
  const NpyHeader header = HeaderDictParser(text, prefix).parse();
  require(!header.fortran_order, prefix,
          "fortran_order True is not supported (save a C-ordered array: numpy.ascontiguousarray)");
  const StoredType stored = parse_descr(header.descr, prefix);
  const DType dtype = resolve_dtype(stored, header.descr, declared, prefix);

  const auto bytes = checked_tensor_bytes(header.shape, dtype);
  require(bytes.has_value(), prefix, "shape ", shape_to_string(header.shape),
          " overflows the size computation");
  const std::uint64_t data_offset = prefix_bytes + header_len;
  const std::uint64_t available = size - data_offset;
  require(available >= *bytes, prefix, "truncated: shape ", shape_to_string(header.shape), " of '",
          header.descr, "' needs ", *bytes, " bytes of data, the file holds ", available);
  require(available == *bytes, prefix, available - *bytes, " trailing bytes after the data of shape ",
          shape_to_string(header.shape));
  Tensor tensor(dtype, header.shape);
  source.read(data_offset, tensor.bytes(), tensor.nbytes());
  return tensor;
}

Tensor read_npy(const std::filesystem::path& path, std::optional<DType> declared) {
  return read_npy(FileSource(path), declared);
}

Tensor read_npy_from_memory(std::span<const std::byte> bytes, std::string_view name_for_errors,
                            std::optional<DType> declared) {
  return read_npy(MemorySource(bytes, name_for_errors), declared);
}

}  // namespace pao
