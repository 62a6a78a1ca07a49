// An installed pao's consumer (tests/install/install_consumer.sh): loads a decode golden in one call
// (pao::golden::load_decode_case), reruns V1 in the kernel precision, compares with the golden's
// v1.out bit for bit, and reads a device descriptor from the installed data with pao::sim.
// Usage: pao_consumer GOLDEN. Exit status 0 when the outputs match, 1 when not, 2 on an error.
#include <cstdio>
#include <cstring>
#include <string>

#include "pao/core/error.hpp"
#include "pao/golden/reader.hpp"
#include "pao/kernels/paged_attention.hpp"
#include "pao/sim/model/device.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: pao_consumer GOLDEN\n");
    return 2;
  }
  try {
    const pao::cases::DecodeCase c = pao::golden::load_decode_case(argv[1]);
    const pao::DecodeOutputs kernel = pao::paged_attention_v1(c.args(), pao::Precision::kernel, c.spec);
    const pao::Tensor expected = pao::golden::TensorFile::open(argv[1]).read("v1.out");
    const bool same = kernel.out.dtype() == expected.dtype() && kernel.out.shape() == expected.shape() &&
                      std::memcmp(kernel.out.bytes(), expected.bytes(), expected.nbytes()) == 0;
    std::string device_file = PAO_CONSUMER_DATA_DIR;
    device_file.append("/devices/bi-v100.json");
    const pao::sim::Device device = pao::sim::load_device(device_file);
    std::printf("pao %s consumer: case %s v1.out %s (%lld values); device %s: %lld SMs\n", PAO_VERSION,
                c.spec.id.c_str(), same ? "bit-identical" : "DIFFERS",
                static_cast<long long>(expected.numel()), device.name.c_str(),
                static_cast<long long>(device.num_sms));
    return same ? 0 : 1;
  } catch (const pao::Error& e) {
    std::fprintf(stderr, "pao_consumer: error: %s\n", e.what());
    return 2;
  }
}
