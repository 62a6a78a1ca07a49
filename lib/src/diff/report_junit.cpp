// The JUnit XML diff report (pao/diff/report.hpp): a testsuite per case, a testcase per tensor
// (classname = the case id), a failure element with the worst element and the pattern.
#include <cstdio>
#include <sstream>

#include "pao/diff/report.hpp"

namespace pao::diff {

namespace {

std::string xml(std::string_view s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control characters.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') {
          out += '?';
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string failure_text(const TensorReport& t) {
  std::ostringstream os;
  if (!t.problem.empty()) return t.actual_name + ": " + t.problem;
  os << t.mismatched << " of " << t.compared << " elements mismatch (" << describe(t.policy) << ")";
  if (t.worst_abs)
    os << "; worst abs error " << t.worst_abs->abs_error << " at " << describe(t.worst_abs->location)
       << ": actual " << t.worst_abs->actual << ", expected " << t.worst_abs->expected;
  os << "; pattern " << to_string(t.verdict.pattern) << ": " << t.verdict.detail;
  return os.str();
}

}  // namespace

std::string render_junit(const DiffReport& report) {
  std::ostringstream os;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  os << "<testsuites name=\"pao diff\" tests=\"" << report.passed() + report.failed() << "\" failures=\""
     << report.failed() << "\">\n";
  for (const auto& c : report.cases) {
    if (c.not_run) {
      os << "  <testsuite name=\"" << xml(c.case_id) << "\" tests=\"1\" failures=\"0\" skipped=\"1\">\n"
         << "    <testcase classname=\"" << xml(c.case_id)
         << "\" name=\"case\"><skipped message=\"not run\"/></testcase>\n"
         << "  </testsuite>\n";
      continue;
    }
    const std::int64_t tests = c.error.empty() ? static_cast<std::int64_t>(c.tensors.size()) : 1;
    os << "  <testsuite name=\"" << xml(c.case_id) << "\" tests=\"" << tests << "\" failures=\""
       << c.failed_count() << "\">\n";
    if (!c.error.empty()) {
      os << "    <testcase classname=\"" << xml(c.case_id) << "\" name=\"case\">\n      <failure message=\""
         << xml(c.error) << "\"/>\n    </testcase>\n";
    }
    for (const auto& t : c.tensors) {
      os << "    <testcase classname=\"" << xml(c.case_id) << "\" name=\"" << xml(t.name) << "\"";
      if (t.passed) {
        os << "/>\n";
        continue;
      }
      os << ">\n      <failure message=\"" << xml(to_string(t.verdict.pattern)) << "\">"
         << xml(failure_text(t)) << "</failure>\n    </testcase>\n";
    }
    os << "  </testsuite>\n";
  }
  os << "</testsuites>\n";
  return os.str();
}

}  // namespace pao::diff
