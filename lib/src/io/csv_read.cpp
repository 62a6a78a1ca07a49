// RFC 4180 records with comment lines (pao/io/csv_read.hpp).
#include "pao/io/csv_read.hpp"

#include "pao/core/error.hpp"
#include "pao/core/excerpt.hpp"

namespace pao {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string trimmed(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && is_blank(s[b])) ++b;
  while (e > b && is_blank(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace

std::vector<CsvRecord> read_csv_records(std::string_view text, std::string_view origin) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte order mark
  std::vector<CsvRecord> records;
  std::size_t i = 0, line = 1;
  const std::size_t n = text.size();
  while (i < n) {
    // Between records: a comment or blank line is skipped whole.
    const std::size_t eol = text.find('\n', i);
    const std::string_view first_line = text.substr(i, eol == std::string_view::npos ? n - i : eol - i);
    if (trimmed(first_line).empty() || first_line.front() == '#') {
      i = eol == std::string_view::npos ? n : eol + 1;
      ++line;
      continue;
    }
    CsvRecord record;
    record.line = line;
    std::string cell;
    bool end_of_record = false;
    while (!end_of_record) {
      // One field, from i: leading blanks, then a quoted or an unquoted body.
      std::size_t j = i;
      while (j < n && (text[j] == ' ' || text[j] == '\t')) ++j;
      if (j < n && text[j] == '"') {
        const std::size_t opened_on = line;
        cell.clear();
        ++j;
        for (;;) {
          require(j < n, origin, ":", opened_on, ": a quoted field is never closed (a '\"' is missing)");
          if (text[j] == '"') {
            if (j + 1 < n && text[j + 1] == '"') {
              cell += '"';
              j += 2;
              continue;
            }
            ++j;
            break;
          }
          if (text[j] == '\n') ++line;
          cell += text[j++];
        }
        while (j < n && is_blank(text[j])) ++j;
        require(j == n || text[j] == ',' || text[j] == '\n', origin, ":", line,
                ": text after the closing quote of a field: '", excerpt(text.substr(j, 40)), "'");
        record.cells.push_back(std::move(cell));
      } else {
        std::size_t k = j;
        while (k < n && text[k] != ',' && text[k] != '\n') ++k;
        record.cells.push_back(trimmed(text.substr(j, k - j)));
        j = k;
      }
      if (j < n && text[j] == ',') {
        i = j + 1;
        if (i == n) record.cells.emplace_back();  // a trailing comma: one more, empty cell
        end_of_record = i == n;
      } else {
        i = j < n ? j + 1 : n;  // past the '\n'
        ++line;
        end_of_record = true;
      }
    }
    records.push_back(std::move(record));
  }
  return records;
}

std::string csv_cell(std::string_view text) {
  // A leading '#' is quoted too: first in its record, it would read as a comment line.
  const bool plain =
      text.find_first_of(",\"\r\n") == std::string_view::npos &&
      (text.empty() || (!is_blank(text.front()) && !is_blank(text.back()) && text.front() != '#'));
  if (plain) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace pao
