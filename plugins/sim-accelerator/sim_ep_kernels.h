// Element-wise float kernels of the simulated accelerator, computed on the CPU.
// Binary ops follow numpy (ONNX multidirectional) broadcasting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rung::sim_ep {

enum class OpKind { Add, Sub, Mul, Div, Relu, Sigmoid, Tanh, Sqrt, Abs, Neg };

// The ONNX op type -> kernel mapping; nullopt for op types the simulator cannot compute.
std::optional<OpKind> op_kind_from_name(std::string_view op_type);
const char* op_kind_name(OpKind op);
bool is_binary(OpKind op);
// Every op type the simulator implements, comma separated (the default `ops` knob).
const char* all_op_names();

using Shape = std::vector<int64_t>;

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

}  // namespace rung::sim_ep
