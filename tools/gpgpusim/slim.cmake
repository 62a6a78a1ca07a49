# The slim pao CUDA build for GPGPU-Sim (cmake -C tools/gpgpusim/slim.cmake; tools/gpgpusim/setup.sh).
# GPGPU-Sim runs ptxas over every kernel of a program before its first launch: with all 329 entry
# points that took more than 8 minutes. These are what data/cases/gpgpusim.json and the timing
# grid (data/cases/gpgpusim.json, gpgpusim-timing.json) need; anything else is refused by the dispatcher with
# "not in this slim build".
set(PAO_CUDA_HEAD_SIZES "64;128" CACHE STRING "")
set(PAO_CUDA_BLOCK_SIZES "16;32" CACHE STRING "")
set(PAO_CUDA_DTYPE_PAIRS "f16:f16;bf16:bf16;f16:fp8_e4m3" CACHE STRING "")
set(CMAKE_CUDA_ARCHITECTURES "75" CACHE STRING "")
set(PAO_BUILD_TESTS OFF CACHE BOOL "")
set(PAO_PYTHON OFF CACHE BOOL "")
set(PAO_CUDA ON CACHE STRING "")
set(CMAKE_BUILD_TYPE Release CACHE STRING "")
# GPGPU-Sim stands in for libcudart.so: the program must link the shared runtime, not cudart_static.
set(CMAKE_CUDA_RUNTIME_LIBRARY Shared CACHE STRING "")
