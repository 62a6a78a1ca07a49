// Tests of pao/core/thread_env.hpp: a thread count OpenMP cannot honour is refused naming the
// variable; what OpenMP defines (a count, a list per nesting level, unset, empty) is not.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "pao/core/thread_env.hpp"

namespace {

std::string problem(const std::map<std::string, std::string>& env) {
  return pao::thread_environment_problem([&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

}  // namespace

TEST_CASE("thread environment: counts OpenMP can honour pass") {
  CHECK(problem({}).empty());
  CHECK(problem({{"OMP_NUM_THREADS", ""}}).empty());
  for (const char* ok : {"1", "2", "4096", " 8 ", "4,2", "16,1,1"}) {
    INFO(ok);
    CHECK(problem({{"OMP_NUM_THREADS", ok}}).empty());
  }
  CHECK(problem({{"OMP_THREAD_LIMIT", "64"}}).empty());
}

TEST_CASE("thread environment: anything else is refused, naming the variable and the rule") {
  for (const char* bad :
       {"100000000", "4097", "0", "-3", "abc", "1.5", "2,", ",2", "2,0", "1e3", "99999999999999999999"}) {
    INFO(bad);
    const std::string why = problem({{"OMP_NUM_THREADS", bad}});
    CHECK(why.find(std::string("OMP_NUM_THREADS='") + bad + "'") == 0);
    CHECK(why.find("a positive integer up to 4096") != std::string::npos);
  }
  CHECK(problem({{"OMP_THREAD_LIMIT", "0"}}).find("OMP_THREAD_LIMIT='0'") == 0);
  // A hostile value is quoted as an excerpt: one short line.
  CHECK(problem({{"OMP_NUM_THREADS", std::string(100000, '9')}}).size() < 400);
}
