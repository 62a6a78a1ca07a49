// The CUDA tools' entry points. Each tool has its own executable (pao-cuda-check, pao-cuda-bench,
// pao-cuda-probe: tool_main.cpp with the tool's name defined), and pao-cuda holds all three in one
// binary (multicall_main.cpp), the kernels' fat binary once: what tools/gpu/package.sh ships to a
// lent GPU, under its carry limit, with the three names as links to it.
#pragma once

int pao_cuda_check_main(int argc, char** argv);
int pao_cuda_bench_main(int argc, char** argv);
int pao_cuda_probe_main(int argc, char** argv);
