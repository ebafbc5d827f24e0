// Float kernels of the simulated accelerator, computed on the CPU: element-wise ops (binary ones follow numpy,
// i.e. ONNX multidirectional, broadcasting) and a naive two-dimensional MatMul.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rung::sim_ep {

enum class OpKind { Add, Sub, Mul, Div, Relu, Sigmoid, Tanh, Sqrt, Abs, Neg, MatMul };

// The ONNX op type -> kernel mapping; nullopt for op types the simulator cannot compute.
std::optional<OpKind> op_kind_from_name(std::string_view op_type);
const char* op_kind_name(OpKind op);
bool is_binary(OpKind op);  // two inputs (MatMul included)
// Every op type the simulator implements, comma separated.
const char* all_op_names();
// What it claims unless told otherwise (the default `ops` knob): the element-wise ops. MatMul is claimed only
// when named, so that models whose time is in a MatMul stay the CPU's unless a test asks otherwise.
const char* default_op_names();

using Shape = std::vector<int64_t>;

// The output shape of `op` on inputs of these shapes: broadcast_shapes for element-wise binary ops, [M, N] for a
// MatMul of [M, K] and [K, N], the input's shape for unary ops. Negative dimensions are unknown; nullopt when the
// shapes are known not to fit.
std::optional<Shape> output_shape(OpKind op, const std::vector<Shape>& inputs);

// Broadcast result of `a` and `b`. Negative dimensions mean "unknown" (as at GetCapability time): an unknown
// dimension is compatible with anything. Returns nullopt when the shapes are known to be incompatible.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

size_t element_count(const Shape& shape);
std::string shape_to_string(const Shape& shape);

// out[i] = op(in[i]) + perturb.
void run_unary(OpKind op, const float* in, float* out, size_t count, float perturb);

// out = op(a, b) + perturb, with `out_shape` = broadcast_shapes(a_shape, b_shape) (all dimensions known).
void run_binary(OpKind op, const float* a, const Shape& a_shape, const float* b, const Shape& b_shape, float* out,
                const Shape& out_shape, float perturb);

// out[M, N] = a[M, K] x b[K, N] + perturb.
void run_matmul(const float* a, const float* b, float* out, size_t m, size_t k, size_t n, float perturb);

}  // namespace rung::sim_ep
