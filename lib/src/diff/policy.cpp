// Per-tensor diff policies and their overrides (pao/diff/policy.hpp).
#include "pao/diff/policy.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <tuple>

#include "pao/core/error.hpp"
#include "pao/core/suggest.hpp"
#include "pao/diff/diff.hpp"

namespace pao::diff {

namespace {

double parse_number(std::string_view arg, std::string_view key, std::string_view text) {
  double v = 0;
  const auto res = std::from_chars(text.data(), text.data() + text.size(), v);
  if (res.ec != std::errc() || res.ptr != text.data() + text.size() || !std::isfinite(v) || v < 0)
    fail("--policy ", arg, ": ", key, " = '", text, "' is not a non-negative number");
  return v;
}

std::string number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

std::string to_string(Rule rule) {
  switch (rule) {
    case Rule::flash:
      return "flash";
    case Rule::elementwise:
      return "elementwise";
    case Rule::nmse:
      return "nmse";
    case Rule::bitwise:
      return "bitwise";
  }
  return "?";
}

std::pair<double, double> torch_tolerances(DType dtype) {
  switch (dtype) {
    case DType::f16:
      return {1e-5, 1e-3};
    case DType::bf16:
      return {1e-5, 1.6e-2};
    case DType::f64:
      return {1e-7, 1e-7};
    default:
      return {1e-5, 1.3e-6};
  }
}

Policy default_policy(std::string_view tensor, DType golden_dtype) {
  Policy p;
  // Every output, partials included, is judged against the exact computation (the diff runs the
  // exact V2 for the partials), with the oracle's kernel precision as the measure of legitimate error.
  p.rule = Rule::flash;
  // A max_logit error of d scales its partition's weight by e^d whatever the logit's size, and a
  // max_logit near 0 is a cancellation of much larger terms (q.k against the ALiBi bias): logits
  // are judged in absolute units, by the global criterion, not against their row's own scale.
  p.local = tensor != "v2.max_logits";
  std::tie(p.atol, p.rtol) = torch_tolerances(golden_dtype);
  return p;
}

const std::vector<std::string>& policy_tensor_names() {
  static const std::vector<std::string> names = {"*",          "out",        "v1.out",        "v2.out",
                                                 "prefix.out", "v2.tmp_out", "v2.max_logits", "v2.exp_sums",
                                                 kReduceName};
  return names;
}

PolicyOverride parse_policy_override(std::string_view arg) {
  const auto colon = arg.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= arg.size())
    fail("--policy ", arg, ": expected NAME:key=value[,key=value...], e.g. v2.tmp_out:rtol=1e-2 or out:k=3");
  PolicyOverride o;
  o.tensor = std::string(arg.substr(0, colon));
  // vLLM's names of the outputs are aliases of pao's.
  if (o.tensor == "output") o.tensor = "out";
  if (o.tensor == "tmp_out" || o.tensor == "max_logits" || o.tensor == "exp_sums")
    o.tensor = "v2." + o.tensor;
  const auto& names = policy_tensor_names();
  if (std::find(names.begin(), names.end(), o.tensor) == names.end()) {
    std::string list, suggestion;
    for (const auto& n : names) {
      list += (list.empty() ? "" : ", ") + n;
      const bool related = n.find(o.tensor) != std::string::npos || o.tensor.find(n) != std::string::npos;
      if (n.size() > 1 && related && n.size() > suggestion.size())
        suggestion = n;  // the closest: the longest
    }
    fail("--policy ", arg, ": no output is called '", o.tensor, "'",
         suggestion.empty() ? "" : " (did you mean " + suggestion + "?)", "; the names are ", list,
         " (and vLLM's tmp_out, max_logits, exp_sums, output)");
  }
  std::string_view rest = arg.substr(colon + 1);
  bool flash_keys = false, elementwise_keys = false, nmse_keys = false;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) fail("--policy ", arg, ": '", item, "' is not key=value");
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "rule") {
      o.rule_explicit = true;
      if (value == "flash") {
        o.rule = Rule::flash;
      } else if (value == "elementwise") {
        o.rule = Rule::elementwise;
      } else if (value == "nmse") {
        o.rule = Rule::nmse;
      } else if (value == "bitwise") {
        o.rule = Rule::bitwise;
      } else {
        fail("--policy ", arg, ": rule = '", value, "' (expected flash, elementwise, nmse or bitwise)");
      }
    } else if (key == "k") {
      o.k = parse_number(arg, key, value), flash_keys = true;
    } else if (key == "floor") {
      o.floor = parse_number(arg, key, value), flash_keys = true;
    } else if (key == "local" || key == "distributional") {
      if (value != "0" && value != "1")
        fail("--policy ", arg, ": ", key, " = '", value, "' (expected 0 or 1)");
      (key == "local" ? o.local : o.distributional) = value == "1";
      flash_keys = true;
    } else if (key == "atol") {
      o.atol = parse_number(arg, key, value), elementwise_keys = true;
    } else if (key == "rtol") {
      o.rtol = parse_number(arg, key, value), elementwise_keys = true;
    } else if (key == "nmse") {
      o.nmse = parse_number(arg, key, value), nmse_keys = true;
    } else {
      fail("--policy ", arg, ": unknown key '", key,
           "' (expected rule, k, floor, local, distributional, atol, rtol, nmse)");
    }
  }
  if (!o.rule) {
    const int kinds = int{flash_keys} + int{elementwise_keys} + int{nmse_keys};
    if (kinds > 1)
      fail("--policy ", arg, ": keys of several rules; say which with rule=flash|elementwise|nmse");
    if (flash_keys) o.rule = Rule::flash;
    if (elementwise_keys) o.rule = Rule::elementwise;
    if (nmse_keys) o.rule = Rule::nmse;
  }
  return o;
}

Policy apply_overrides(Policy p, std::string_view tensor, const std::vector<PolicyOverride>& overrides) {
  for (const auto& o : overrides) {
    if (o.tensor != "*" && o.tensor != tensor) continue;
    if (o.tensor == "*" && !o.rule_explicit && o.rule && *o.rule != Rule::nmse && *o.rule != p.rule) continue;
    if (o.rule) p.rule = *o.rule;
    if (o.k) p.k = *o.k;
    if (o.floor) p.floor = *o.floor;
    if (o.local) p.local = *o.local;
    if (o.distributional) p.distributional = *o.distributional;
    if (o.atol) p.atol = *o.atol;
    if (o.rtol) p.rtol = *o.rtol;
    if (o.nmse) p.nmse = *o.nmse;
  }
  return p;
}

std::string describe(const Policy& p) {
  switch (p.rule) {
    case Rule::flash:
      return "flash: max|a - exact| <= " + number(p.k) + " x kernel error + " +
             (p.floor ? number(*p.floor) : std::string("(2u + 1e-6) max|exact|")) +
             (p.local ? ", per row too" : "") +
             (p.distributional ? "; NMSE <= " + number(p.nmse_factor) + " x kernel's + u^2/4, mean ulp <= " +
                                     number(p.ulp_factor) + " x kernel's + 0.25"
                               : "");
    case Rule::elementwise:
      return "elementwise: |a - e| <= " + number(p.atol) + " + " + number(p.rtol) + " |e|";
    case Rule::nmse:
      return "nmse: sum (a - e)^2 / sum e^2 <= " + number(p.nmse);
    case Rule::bitwise:
      return "bitwise: every element equals the golden's, bit for bit";
  }
  return "?";
}

}  // namespace pao::diff
