#include "sim_ep_kernels.h"

#include <algorithm>
#include <cmath>

namespace rung::sim_ep {

namespace {

struct OpEntry {
  std::string_view name;
  OpKind kind;
  bool binary;
};

constexpr OpEntry kOps[] = {
    {"Add", OpKind::Add, true},    {"Mul", OpKind::Mul, true},    {"Sub", OpKind::Sub, true},
    {"Div", OpKind::Div, true},    {"Relu", OpKind::Relu, false}, {"Sigmoid", OpKind::Sigmoid, false},
    {"Tanh", OpKind::Tanh, false}, {"Sqrt", OpKind::Sqrt, false}, {"Abs", OpKind::Abs, false},
    {"Neg", OpKind::Neg, false},   {"MatMul", OpKind::MatMul, true},
};

const OpEntry& entry(OpKind op) {
  for (const auto& e : kOps)
    if (e.kind == op) return e;
  return kOps[0];  // unreachable: every OpKind has an entry
}

template <typename F>
void apply_binary(F f, const float* a, const Shape& a_shape, const float* b, const Shape& b_shape, float* out,
                  const Shape& out_shape) {
  const size_t n = element_count(out_shape);
  const size_t na = element_count(a_shape), nb = element_count(b_shape);
  if (na == n && nb == n) {
    for (size_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
    return;
  }
  if (nb == 1 && na == n) {
    const float s = b[0];
    for (size_t i = 0; i < n; ++i) out[i] = f(a[i], s);
    return;
  }
  if (na == 1 && nb == n) {
    const float s = a[0];
    for (size_t i = 0; i < n; ++i) out[i] = f(s, b[i]);
    return;
  }
  // General broadcasting: walk the output index with per-input strides (0 on broadcast dimensions).
  const size_t rank = out_shape.size();
  auto strides_for = [rank, &out_shape](const Shape& s) {
    std::vector<size_t> strides(rank, 0);
    size_t stride = 1;
    for (size_t k = 0; k < s.size(); ++k) {
      const size_t src = s.size() - 1 - k, dst = rank - 1 - k;
      const auto dim = static_cast<size_t>(s[src]);
      strides[dst] = (dim == 1 && out_shape[dst] != 1) ? 0 : stride;
      stride *= dim;
    }
    return strides;
  };
  const std::vector<size_t> sa = strides_for(a_shape), sb = strides_for(b_shape);
  std::vector<size_t> idx(rank, 0);
  size_t ia = 0, ib = 0;
  for (size_t i = 0; i < n; ++i) {
    out[i] = f(a[ia], b[ib]);
    for (size_t d = rank; d-- > 0;) {  // increment the multi-index, innermost dimension first
      ++idx[d];
      ia += sa[d];
      ib += sb[d];
      if (idx[d] < static_cast<size_t>(out_shape[d])) break;
      ia -= sa[d] * idx[d];
      ib -= sb[d] * idx[d];
      idx[d] = 0;
    }
  }
}

template <typename F>
void apply_unary(F f, const float* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = f(in[i]);
}

// Adding 0 is not an identity for -0.0f, so an unperturbed result is left untouched.
void add_perturb(float* out, size_t n, float perturb) {
  if (perturb == 0.0f) return;
  for (size_t i = 0; i < n; ++i) out[i] += perturb;
}

}  // namespace

std::optional<OpKind> op_kind_from_name(std::string_view op_type) {
  for (const auto& e : kOps)
    if (e.name == op_type) return e.kind;
  return std::nullopt;
}

const char* op_kind_name(OpKind op) { return entry(op).name.data(); }
bool is_binary(OpKind op) { return entry(op).binary; }
const char* all_op_names() { return "Add,Mul,Sub,Div,Relu,Sigmoid,Tanh,Sqrt,Abs,Neg,MatMul"; }
const char* default_op_names() { return "Add,Mul,Sub,Div,Relu,Sigmoid,Tanh,Sqrt,Abs,Neg"; }

std::optional<Shape> output_shape(OpKind op, const std::vector<Shape>& inputs) {
  if (op != OpKind::MatMul) return is_binary(op) ? broadcast_shapes(inputs[0], inputs[1]) : inputs[0];
  const Shape& a = inputs[0];
  const Shape& b = inputs[1];
  if (a.size() != 2 || b.size() != 2) return std::nullopt;
  if (a[1] >= 0 && b[0] >= 0 && a[1] != b[0]) return std::nullopt;
  return Shape{a[0], b[1]};
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t da = k < a.size() ? a[a.size() - 1 - k] : 1;
    const int64_t db = k < b.size() ? b[b.size() - 1 - k] : 1;
    int64_t d;
    if (da < 0 || db < 0) {
      // Unknown on at least one side: the known side decides unless it is 1.
      d = (da < 0 && db < 0) ? -1 : (da < 0 ? (db == 1 ? -1 : db) : (da == 1 ? -1 : da));
    } else if (da == db || db == 1) {
      d = da;
    } else if (da == 1) {
      d = db;
    } else {
      return std::nullopt;
    }
    out[rank - 1 - k] = d;
  }
  return out;
}

size_t element_count(const Shape& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d < 0 ? 0 : d);
  return n;
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

static void unary(OpKind op, const float* in, float* out, size_t n) {
  switch (op) {
    case OpKind::Relu: return apply_unary([](float x) { return x > 0.0f ? x : 0.0f; }, in, out, n);
    case OpKind::Sigmoid: return apply_unary([](float x) { return 1.0f / (1.0f + std::exp(-x)); }, in, out, n);
    case OpKind::Tanh: return apply_unary([](float x) { return std::tanh(x); }, in, out, n);
    case OpKind::Sqrt: return apply_unary([](float x) { return std::sqrt(x); }, in, out, n);
    case OpKind::Abs: return apply_unary([](float x) { return std::fabs(x); }, in, out, n);
    case OpKind::Neg: return apply_unary([](float x) { return -x; }, in, out, n);
    default: break;  // binary ops never reach here
  }
}

static void binary(OpKind op, const float* a, const Shape& a_shape, const float* b, const Shape& b_shape, float* out,
                   const Shape& out_shape) {
  switch (op) {
    case OpKind::Add:
      return apply_binary([](float x, float y) { return x + y; }, a, a_shape, b, b_shape, out, out_shape);
    case OpKind::Sub:
      return apply_binary([](float x, float y) { return x - y; }, a, a_shape, b, b_shape, out, out_shape);
    case OpKind::Mul:
      return apply_binary([](float x, float y) { return x * y; }, a, a_shape, b, b_shape, out, out_shape);
    case OpKind::Div:
      return apply_binary([](float x, float y) { return x / y; }, a, a_shape, b, b_shape, out, out_shape);
    default: break;  // unary ops never reach here
  }
}

void run_unary(OpKind op, const float* in, float* out, size_t n, float perturb) {
  unary(op, in, out, n);
  add_perturb(out, n, perturb);
}

void run_matmul(const float* a, const float* b, float* out, size_t m, size_t k, size_t n, float perturb) {
  std::fill(out, out + m * n, 0.0f);
  for (size_t i = 0; i < m; ++i) {
    for (size_t p = 0; p < k; ++p) {
      const float x = a[i * k + p];
      for (size_t j = 0; j < n; ++j) out[i * n + j] += x * b[p * n + j];
    }
  }
  add_perturb(out, m * n, perturb);
}

void run_binary(OpKind op, const float* a, const Shape& a_shape, const float* b, const Shape& b_shape, float* out,
                const Shape& out_shape, float perturb) {
  binary(op, a, a_shape, b, b_shape, out, out_shape);
  add_perturb(out, element_count(out_shape), perturb);
}

}  // namespace rung::sim_ep
