// Bias correction for rounded weights. Rounding a channel's weights shifts the
// mean of its output: the rounding errors, each times its input's mean, do not
// cancel. A classifier near a tie reads that shift as a changed decision (the
// PP-OCR classifier's w8 form moved every changed crop the same way, towards
// one class). Each weighted node's shift is measured on the calibration inputs
// by a twin of the node on the rounded weights, fed the float graph's own
// tensors, so it is that node's error alone, not what it inherits; then it is
// taken off the node's bias.
#pragma once

#include <cstddef>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "parity/inputs.h"
#include "rung/result.h"

namespace onnx {
class ModelProto;
}

namespace rung {

class OrtProcess;

struct ChannelShift {
  std::string node;
  std::vector<double> mean;  // per output channel: the rounded node's mean output less the float node's
};

// `rounded` is `prepared` with the weights of `nodes` rewritten (insert_qdq of a
// w8 form: each node's input 1 then reads the rounded weight).
Result<std::vector<ChannelShift>> measure_rounding_shifts(OrtProcess& process, const onnx::ModelProto& prepared, const onnx::ModelProto& rounded,
                                                          const std::set<std::string>& nodes, const std::vector<InputItem>& items,
                                                          const InputPlan& input_plan, int threads, const std::filesystem::path& work);

struct BiasCorrection {
  std::size_t nodes = 0;       // whose bias took its shift off
  std::size_t uncorrected = 0; // shifted but without a bias to correct (a MatMul without an Add of constants after it; a Gemm whose C is not one value per channel)
};

// Takes each shift off its node's bias in `prepared`: a Conv or ConvTranspose
// without one gets one, a Gemm's C is corrected where it holds one value per
// output channel, and a MatMul's where the Add after it adds one per channel.
BiasCorrection correct_biases(onnx::ModelProto& prepared, const std::vector<ChannelShift>& shifts);

}  // namespace rung
