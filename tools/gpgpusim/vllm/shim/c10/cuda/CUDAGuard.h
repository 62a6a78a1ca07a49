// Stand-in (tools/gpgpusim/vllm/shim/torch/all.h): nothing of it is used by the kernels.
#pragma once
