# PTX rewrites applied to every PTX GPGPU-Sim loads (tools/gpgpusim/wrappers/cuobjdump).
# Each keeps the program's meaning; each fixes a parse that GPGPU-Sim 4.2 gets silently wrong.
#
# 1. shfl.sync with a predicate destination: CUDA 13 emits `shfl.sync.bfly.b32 %r1|%p1, ...`;
#    GPGPU-Sim 4.2 takes `%r1|%p1` for something else and the shuffle returns wrong values
#    (docs/gpgpusim.md: the PTX reproducer). pao's kernels never read the predicate (every lane
#    is in range for the butterfly and the broadcast), so dropping it keeps the meaning.
s/\(shfl\.sync\.[a-z]*\.b32[ \t]*[%A-Za-z_][A-Za-z0-9_]*\)|[%A-Za-z_][A-Za-z0-9_]*/\1/g
