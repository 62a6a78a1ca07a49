// The one reader of CSV input (measurement files): RFC 4180 records — a field in double quotes may
// hold commas, line breaks and doubled quotes ("a ""b"", c"), as pandas' to_csv, a spreadsheet or
// Python's csv module writes them — plus what pao's own files use: '#' comment lines and blank
// lines between records, spaces around an unquoted field trimmed, CRLF line ends, a UTF-8 byte
// order mark.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pao {

struct CsvRecord {
  std::size_t line = 0;  // the 1-based line the record starts on
  std::vector<std::string> cells;
};

/// Every record of `text` in order; throws pao::Error "<origin>:<line>: ..." on a quote left open
/// or text after a closing quote.
std::vector<CsvRecord> read_csv_records(std::string_view text, std::string_view origin);

/// One cell as a CSV writer must write it: unchanged when it holds no comma, quote, line break or
/// surrounding space and does not start with '#', else in double quotes with its quotes doubled.
std::string csv_cell(std::string_view text);

}  // namespace pao
