// Tests of pao/io/csv_read.hpp: RFC 4180 records (quoted commas, quotes and line breaks), pao's
// comment and blank lines, what other writers add (CRLF, a byte order mark), and the errors.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "pao/core/error.hpp"
#include "pao/io/csv_read.hpp"

using pao::read_csv_records;

namespace {

std::vector<std::vector<std::string>> cells_of(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  for (const auto& r : read_csv_records(text, "t.csv")) out.push_back(r.cells);
  return out;
}

}  // namespace

TEST_CASE("csv: plain records, comments, blank lines, trimming, CRLF, a byte order mark") {
  const auto records =
      read_csv_records("\xEF\xBB\xBF# a comment\nkernel, time_us \r\n\n v1 ,2.5\r\n", "t.csv");
  REQUIRE(records.size() == 2);
  CHECK(records[0].cells == std::vector<std::string>{"kernel", "time_us"});
  CHECK(records[0].line == 2);
  CHECK(records[1].cells == std::vector<std::string>{"v1", "2.5"});
  CHECK(records[1].line == 4);
  CHECK(cells_of("a,b,\n") == std::vector<std::vector<std::string>>{{"a", "b", ""}});
  CHECK(cells_of("a,b,") == std::vector<std::vector<std::string>>{{"a", "b", ""}});
  CHECK(cells_of(",\n") == std::vector<std::vector<std::string>>{{"", ""}});
  CHECK(cells_of("").empty());
}

TEST_CASE("csv: quoted fields hold commas, doubled quotes and line breaks (RFC 4180)") {
  // What pandas' to_csv writes for a note with a comma and quotes: the whole field quoted.
  const auto records =
      read_csv_records("note,x\n\"warm, L2 \"\"flushed\"\"\",1\n\"two\nlines\",2\n\"\",3\n", "t.csv");
  REQUIRE(records.size() == 4);
  CHECK(records[1].cells == std::vector<std::string>{"warm, L2 \"flushed\"", "1"});
  CHECK(records[2].cells == std::vector<std::string>{"two\nlines", "2"});
  CHECK(records[2].line == 3);
  CHECK(records[3].line == 5);  // the record after a line break inside quotes keeps its own line
  CHECK(records[3].cells == std::vector<std::string>{"", "3"});
  // Spaces inside quotes are kept; around them, dropped.
  CHECK(cells_of(" \" a \" ,b\n") == std::vector<std::vector<std::string>>{{" a ", "b"}});
  // A '#' inside a record is a character, not a comment.
  CHECK(cells_of("a,#b\n") == std::vector<std::vector<std::string>>{{"a", "#b"}});
}

TEST_CASE("csv: a quote left open or text after a closing quote is named by line") {
  CHECK_THROWS_WITH_AS(read_csv_records("a,b\n1,\"open\n2,3\n", "m.csv"),
                       doctest::Contains("m.csv:2: a quoted field is never closed"), pao::Error);
  CHECK_THROWS_WITH_AS(read_csv_records("a,b\n\"x\"y,1\n", "m.csv"),
                       doctest::Contains("m.csv:2: text after the closing quote"), pao::Error);
}

TEST_CASE("csv: what csv_cell writes reads back as the same cell") {
  for (const std::string cell : {"plain", "", "a,b", "say \"hi\"", "two\nlines", " padded ", "#1"}) {
    CAPTURE(cell);
    const auto records = read_csv_records(pao::csv_cell(cell) + ",end\n", "t.csv");
    REQUIRE(records.size() == 1);
    CHECK(records[0].cells == std::vector<std::string>{cell, "end"});
  }
  CHECK(pao::csv_cell("plain") == "plain");
  CHECK(pao::csv_cell("a,b") == "\"a,b\"");
}
