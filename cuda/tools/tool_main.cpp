// One CUDA tool's executable: PAO_CUDA_TOOL_MAIN names its entry point (cuda/CMakeLists.txt).
#include "tools/cuda_tool_mains.hpp"

int main(int argc, char** argv) { return PAO_CUDA_TOOL_MAIN(argc, argv); }
