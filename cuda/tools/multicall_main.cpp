// pao-cuda: pao-cuda-check, pao-cuda-bench and pao-cuda-probe in one binary, the kernels' fat
// binary once (the package a lent GPU runs: tools/gpu/package.sh). Called through a link named
// after a tool, it is that tool; otherwise the first argument names it: `pao-cuda check --suite smoke`.
#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>

#include "tools/cuda_tool_mains.hpp"

namespace {

struct Tool {
  const char* name;
  int (*main)(int, char**);
};
constexpr Tool kTools[] = {
    {"check", pao_cuda_check_main}, {"bench", pao_cuda_bench_main}, {"probe", pao_cuda_probe_main}};

int usage(std::FILE* to, int status) {
  std::fprintf(to,
               "usage: pao-cuda {check|bench|probe} [ARGS...]  (or through a link named pao-cuda-check, "
               "pao-cuda-bench, pao-cuda-probe)\n"
               "  check  pao-cuda-check: pao's CUDA kernels against the oracle, tensor by tensor\n"
               "  bench  pao-cuda-bench: the kernels timed, the measurement CSV of pao sim calibrate\n"
               "  probe  pao-cuda-probe: a device descriptor measured on this GPU\n"
               "`pao-cuda TOOL --help` says more.\n");
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view self = argv[0];
  if (const auto slash = self.rfind('/'); slash != std::string_view::npos) self.remove_prefix(slash + 1);
  for (const Tool& t : kTools)
    if (self == std::string("pao-cuda-") + t.name) return t.main(argc, argv);
  if (argc < 2) return usage(stderr, 2);
  const std::string_view sub = argv[1];
  if (sub == "-h" || sub == "--help") return usage(stdout, 0);
  for (const Tool& t : kTools)
    if (sub == t.name) return t.main(argc - 1, argv + 1);
  std::fprintf(stderr, "pao-cuda: error: unknown tool '%.*s' (check, bench or probe)\n",
               static_cast<int>(std::min<std::size_t>(sub.size(), 80)), sub.data());
  return 2;
}
