// The `memoise` knob's store: one compiled node's last inputs and the output it computed from them. A run whose
// inputs equal them byte for byte gets that output back, so what the node returns is what computing would
// return; only the time differs (a comparison and a copy instead of the kernel).
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "sim_ep_kernels.h"

namespace rung::sim_ep {

// One input as a run hands it over.
struct InputView {
  const void* data = nullptr;
  size_t bytes = 0;
  Shape shape;
  bool constant = false;  // a constant initializer: the same bytes on every run of the session, never compared
};

class Memo {
 public:
  // When these inputs are the remembered ones: asks `output` for the destination of the remembered output's
  // shape, copies the output there and returns true.
  bool reuse(const std::vector<InputView>& inputs, const std::function<float*(const Shape&)>& output) const;
  void store(const std::vector<InputView>& inputs, const Shape& out_shape, const float* out, size_t count);

 private:
  struct Entry {
    std::vector<Shape> shapes;
    std::vector<std::vector<unsigned char>> bytes;  // empty for constant inputs
    Shape out_shape;
    std::vector<float> out;
  };
  static bool same(const Entry& e, const std::vector<InputView>& inputs);

  mutable std::mutex mutex_;  // ONNX Runtime may run one session from several threads
  std::optional<Entry> last_;
};

}  // namespace rung::sim_ep
