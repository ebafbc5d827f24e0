// A registered model: its name, its role, its canonical f32 file and the derived
// forms that exist; and the identity of what a session actually computes.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "rung/input_spec.h"

namespace rung {

// What the application does with a model's outputs. The role can veto a form:
// an embedder always runs f32, because embeddings from any device must compare.
enum class Role { kDetector, kEmbedder, kSegmenter, kGeneric };
const char* role_name(Role r);  // "detector", "embedder", "segmenter", "generic"

// The arithmetic a form runs. kW8 keeps f32 arithmetic on int8 weights: the
// file holds the weights as int8 and ONNX Runtime makes them float again once,
// when the session is built (a form that pays in size where integer kernels
// would not pay in time).
enum class NumericForm { kF32, kF16, kInt8, kA16W8, kA16W16, kW8 };
inline constexpr NumericForm kNumericForms[] = {NumericForm::kF32, NumericForm::kF16, NumericForm::kInt8,
                                                NumericForm::kA16W8, NumericForm::kA16W16, NumericForm::kW8};
const char* numeric_form_name(NumericForm f);  // "f32", "f16", "i8", "a16w8", "a16w16", "w8"

// A release-time derived file (a quantised QDQ form; an offline fp16 file).
struct DerivedForm {
  NumericForm form = NumericForm::kInt8;
  std::filesystem::path path;
};

// A model as the probe and the bench take it: a name, its file, how to feed it.
struct RegisteredModel {
  std::string name;                  // "ppocr_det_v4"
  std::filesystem::path path;        // the canonical f32 file
  InputSpec inputs;                  // how to feed it without the application (dims, fixed values, recorded tensors)
  std::vector<DerivedForm> derived = {};  // its quantised forms: fingerprinted like the f32 file
};

struct ModelRegistration {
  std::string name;                  // "ppocr_det_v4"
  Role role = Role::kGeneric;
  std::filesystem::path f32;         // the canonical file
  std::vector<DerivedForm> derived;
  InputSpec inputs;                  // how the probe feeds it
  // The rungs its files are for (a resolved model variant's); the others send it
  // down to the CPU, which always serves the f32 file. Empty: every rung.
  std::vector<std::string> rungs;
};

// Names what the network computes, not where: "ppocr_det_v4" for f32 on any rung,
// "ppocr_det_v4_f16" from an fp16 engine, "_i8", "_a16w8", "_a16w16" for quantised forms.
std::string model_id(const std::string& name, NumericForm form);

// The rule for a model's name where an application registers one (the C ABI):
// 1 to 64 characters of A-Z a-z 0-9 _ . -, the first a letter or a digit.
// "" when `name` keeps it, else why not (naming the name printably).
inline constexpr std::size_t kMaxModelNameLength = 64;
std::string model_name_problem(const std::string& name);

// The part of a file or directory name that stands for a model, whatever its
// name holds: a name that keeps the rule as it is; any other with each
// character outside the rule's made '_' (a first '.' or '-' too), cut to 55,
// and a hash of the whole name after a '-'. At most 64 characters; it can
// never climb out of the directory it is joined to.
std::string model_file_stem(const std::string& name);

}  // namespace rung
