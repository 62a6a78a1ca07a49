// Lines of the measurement CSV (text cells quoted as RFC 4180 says: pao/io/csv_read.hpp).
#include "bench/measurement_csv.hpp"

#include <sstream>

#include "pao/io/csv_read.hpp"

namespace pao::cuda::bench {

std::string measurement_csv_header() {
  return "device,kernel,partition_size,num_seqs,num_heads,num_kv_heads,head_size,block_size,dtype,"
         "kv_cache_dtype,seq_len,query_len,max_seq_len,time_us,stddev_us,repeats,timing,pool_blocks,"
         "achieved_gbps,note";
}

std::string measurement_csv_row(const MeasurementRow& r) {
  std::ostringstream os;
  os.precision(8);
  const bool v2 = !r.prefix && r.partition_size > 0;
  const std::string kernel = r.prefix
                                 ? "prefix:" + std::to_string(r.block_m) + "x" + std::to_string(r.block_n)
                             : v2 ? "v2:" + std::to_string(r.partition_size)
                                  : std::string("v1");
  os << csv_cell(r.device) << "," << kernel << "," << (v2 ? std::to_string(r.partition_size) : std::string())
     << "," << r.num_seqs << "," << r.num_heads << "," << r.num_kv_heads << "," << r.head_size << ","
     << r.block_size << "," << dtype_name(r.dtype) << ","
     << (r.kv_cache_dtype == r.dtype ? std::string("auto") : std::string(dtype_name(r.kv_cache_dtype))) << ","
     << r.seq_len << "," << (r.prefix ? r.query_len : 1) << ","
     << (r.max_seq_len > 0 ? r.max_seq_len : r.seq_len) << "," << r.time_us << "," << r.stddev_us << ","
     << r.repeats << "," << r.timing << ","
     << (r.pool_blocks > 0 ? std::to_string(r.pool_blocks) : std::string()) << "," << r.achieved_gbps << ","
     << csv_cell(r.note);
  return os.str();
}

}  // namespace pao::cuda::bench
