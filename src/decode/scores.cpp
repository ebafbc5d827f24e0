// Activations, top-k, cosine similarity and mask IoU.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "rung/decode.h"

namespace rung {

Result<Activation> activation_from_name(std::string_view name) {
  if (name == "none") return Activation::kNone;
  if (name == "sigmoid") return Activation::kSigmoid;
  if (name == "softmax") return Activation::kSoftmax;
  return Error{ErrorCode::kInvalidArgument, fmt::format("unknown activation '{}' (expected none, sigmoid, softmax)", name)};
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::kNone: return "none";
    case Activation::kSigmoid: return "sigmoid";
    case Activation::kSoftmax: return "softmax";
  }
  return "?";
}

std::vector<double> activate(std::span<const double> logits, Activation activation) {
  std::vector<double> out(logits.begin(), logits.end());
  if (activation == Activation::kSigmoid) {
    for (auto& v : out) v = 1.0 / (1.0 + std::exp(-v));
  } else if (activation == Activation::kSoftmax && !out.empty()) {
    const double top = *std::max_element(out.begin(), out.end());
    double sum = 0;
    for (auto& v : out) sum += (v = std::exp(v - top));
    for (auto& v : out) v /= sum;
  }
  return out;
}

std::vector<std::size_t> top_k(std::span<const double> scores, std::size_t k) {
  std::vector<std::size_t> idx(scores.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  k = std::min(k, idx.size());
  // NaN sorts last so that it never wins a top-1.
  auto key = [&](std::size_t i) { return std::isnan(scores[i]) ? -INFINITY : scores[i]; };
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(), [&](std::size_t a, std::size_t b) {
    return key(a) > key(b) || (key(a) == key(b) && a < b);
  });
  idx.resize(k);
  return idx;
}

double cosine_similarity(std::span<const double> a, std::span<const double> b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  if (na == 0 && nb == 0) return 1.0;
  if (na == 0 || nb == 0) return 0.0;
  return dot / (std::sqrt(na) * std::sqrt(nb));
}

double mask_iou(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  std::size_t inter = 0, uni = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    inter += a[i] && b[i];
    uni += a[i] || b[i];
  }
  return uni ? static_cast<double>(inter) / static_cast<double>(uni) : 1.0;
}

}  // namespace rung
