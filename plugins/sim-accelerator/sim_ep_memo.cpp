#include "sim_ep_memo.h"

#include <cstring>

namespace rung::sim_ep {

bool Memo::same(const Entry& e, const std::vector<InputView>& inputs) {
  if (e.shapes.size() != inputs.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (e.shapes[i] != inputs[i].shape) return false;
    if (inputs[i].constant) continue;
    if (e.bytes[i].size() != inputs[i].bytes || std::memcmp(e.bytes[i].data(), inputs[i].data, inputs[i].bytes) != 0) return false;
  }
  return true;
}

bool Memo::reuse(const std::vector<InputView>& inputs, const std::function<float*(const Shape&)>& output) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!last_ || !same(*last_, inputs)) return false;
  std::memcpy(output(last_->out_shape), last_->out.data(), last_->out.size() * sizeof(float));
  return true;
}

void Memo::store(const std::vector<InputView>& inputs, const Shape& out_shape, const float* out, size_t count) {
  Entry e;
  for (const InputView& in : inputs) {
    e.shapes.push_back(in.shape);
    const auto* p = static_cast<const unsigned char*>(in.data);
    e.bytes.emplace_back(in.constant ? std::vector<unsigned char>{} : std::vector<unsigned char>(p, p + in.bytes));
  }
  e.out_shape = out_shape;
  e.out.assign(out, out + count);
  std::lock_guard<std::mutex> lock(mutex_);
  last_ = std::move(e);
}

}  // namespace rung::sim_ep
