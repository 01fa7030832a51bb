// fp_add testbench (body in tb_fp_op.hpp): y = a + b against farnn::fp32::add.
// Built per parameter set by tb/fp/CMakeLists.txt (FARNN_PARAM_Latency,
// FARNN_PARAM_TagWidth).
#include "Vfp_add.h"
#include "tb_fp_op.hpp"

#ifndef FARNN_PARAM_Latency
#define FARNN_PARAM_Latency 3
#endif
#ifndef FARNN_PARAM_TagWidth
#define FARNN_PARAM_TagWidth 1
#endif

int main(int argc, char** argv) {
  farnn::tb::fp::OpConfig cfg;
  cfg.name = "tb_fp_add_l" + std::to_string(FARNN_PARAM_Latency);
  cfg.op_symbol = "+";
  cfg.model = farnn::fp32::add;
  cfg.is_mul = false;
  cfg.latency = FARNN_PARAM_Latency;
  cfg.tag_width = FARNN_PARAM_TagWidth;
  return farnn::tb::run_main(argc, argv, cfg.name, [&](const farnn::tb::Options& opt) {
    opt.allow({"vectors"});
    farnn::tb::fp::run_fp_op<Vfp_add>(opt, cfg);
  });
}
