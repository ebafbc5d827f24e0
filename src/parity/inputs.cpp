#include "parity/inputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "parity/recorded_side.h"
#include "session/inputs.h"
#include "session/npy_file.h"
#include "session/tensor_file.h"
#include "os/regular_file.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

bool is_tensor_file(const fs::path& p) { return p.extension() == ".pb" || p.extension() == ".npy"; }
// ONNX's test folders keep each set's expected outputs beside its inputs: never an input.
bool is_expected_output(const fs::path& p) { return p.filename().string().starts_with("output_") && p.extension() == ".pb"; }
bool is_onnx_test_folder(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "model.onnx", ec);
}
bool hidden(const fs::path& p) { return p.filename().string().starts_with("."); }


std::string names_of(const std::vector<TensorInfo>& infos) {
  std::vector<std::string> n;
  for (const auto& i : infos) n.push_back("'" + i.name + "'");
  return fmt::format("{}", fmt::join(n, ", "));
}

Status check_tensor(const Tensor& t, const TensorInfo& info, const std::string& item) {
  bool ok = t.type == info.type && t.shape.size() == info.shape.size();
  for (std::size_t a = 0; ok && a < t.shape.size(); ++a) ok = info.shape[a] < 0 || info.shape[a] == t.shape[a];
  if (ok) return {};
  return Error{ErrorCode::kInvalidArgument,
               fmt::format("{}: the tensor for input '{}' is {} {}; the model wants {} {} (-1: any size)", item, info.name,
                           element_type_name(t.type), shape_string(t.shape), element_type_name(info.type), shape_string(info.shape))};
}

}  // namespace

Result<InputItems> InputItems::listed(const fs::path& dir) {
  std::error_code ec;
  RUNG_RETURN_IF_ERROR(check_input_directory(dir));
  std::vector<fs::path> entries;
  const bool test_folder = is_onnx_test_folder(dir);  // model.onnx beside test_data_set_N/: the sets are the inputs
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (hidden(e.path())) continue;
    if (e.path().filename() == kRecordingFile) continue;  // a recording's description of itself, not an input
    if (test_folder && !(e.is_directory(ec) && e.path().filename().string().starts_with("test_data_set_"))) continue;
    entries.push_back(e.path());
  }
  std::sort(entries.begin(), entries.end());
  std::vector<InputItem> items;
  for (const auto& p : entries) {
    InputItem item;
    item.name = p.filename().string();
    if (fs::is_directory(p, ec)) {
      for (const auto& f : fs::directory_iterator(p, ec)) {
        if (is_tensor_file(f.path()) && !is_expected_output(f.path())) item.files.push_back(f.path());
      }
      std::sort(item.files.begin(), item.files.end());
      if (item.files.empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: holds no tensor files (.pb, .npy)", p.string())};
      item.kind = InputItem::Kind::kTensors;
    } else if (is_tensor_file(p)) {
      item.files = {p};
      item.kind = InputItem::Kind::kTensors;
    } else if (is_image_file(p)) {
      item.files = {p};
      item.kind = InputItem::Kind::kImage;
    } else {
      return Error{ErrorCode::kInvalidArgument,
                   fmt::format("{}: neither a tensor (.pb, .npy), an image (.png, .jpg, ...) nor a directory of tensors", p.string())};
    }
    item.index = items.size();
    items.push_back(std::move(item));
  }
  if (items.empty()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: {}", dir.string(), test_folder ? "an ONNX test folder with no test_data_set_N/" : "the input directory is empty")};
  }
  InputItems out;
  out.listed_ = std::move(items);
  return out;
}

InputItems InputItems::random(std::size_t count) {
  InputItems out;
  out.random_ = count;
  return out;
}

InputItem InputItems::at(std::size_t index) const {
  if (!listed_.empty()) return listed_.at(index);
  return {fmt::format("random {}", index), InputItem::Kind::kRandom, {}, index};
}

const InputItem* InputItems::first_image() const {
  auto it = std::find_if(listed_.begin(), listed_.end(), [](const InputItem& i) { return i.kind == InputItem::Kind::kImage; });
  return it == listed_.end() ? nullptr : &*it;
}

namespace {

// The kind of value a tensor file is read as: the model input it is named after
// (by file stem, or input_K by position) says; a .npy is always a tensor.
Value::Kind kind_for(const fs::path& f, const ModelIo& io) {
  if (f.extension() == ".npy") return Value::Kind::kTensor;
  const std::string stem = f.stem().string();
  for (const auto& in : io.inputs) {
    if (in.name == stem) return in.kind();
  }
  if (stem.starts_with("input_")) {
    try {
      const auto n = std::stoul(stem.substr(6));
      if (n < io.inputs.size()) return io.inputs[n].kind();
    } catch (const std::exception&) {
    }
  }
  return Value::Kind::kTensor;
}

Result<Value> read_any(const fs::path& f, const ModelIo& io, std::uint64_t max_bytes) {
  if (f.extension() == ".npy") {
    auto t = read_npy_file(f, max_bytes);
    if (!t) return t.error();
    return Value::of(std::move(*t));
  }
  return read_value_file(f, kind_for(f, io), max_bytes);
}

Status check_value(const Value& v, const TensorInfo& info, const std::string& where) {
  if (info.is_tensor() && v.kind == Value::Kind::kTensor) return check_tensor(v.tensor, info, where);
  if (v.kind == info.kind()) return {};
  return Error{ErrorCode::kInvalidArgument, fmt::format("{}: the value for input '{}' is {}; the model wants {}", where, info.name,
                                                        v.describe(), info.describe())};
}

}  // namespace

Result<std::vector<Value>> make_item_values(const InputItem& item, const ModelIo& io, const InputPlan& plan) {
  const std::string where = item.files.empty() ? item.name : item.files.front().string();
  std::map<std::string, Value> given;
  auto model_input = [&](const std::string& name) {
    return std::find_if(io.inputs.begin(), io.inputs.end(), [&](const TensorInfo& t) { return t.name == name; });
  };
  // Inputs left for a file that names none: those neither given nor set by value.
  auto open_inputs = [&](auto pred) {
    std::vector<const TensorInfo*> open;
    for (const auto& in : io.inputs) {
      if (!given.count(in.name) && !plan.spec.values.count(in.name) && pred(in)) open.push_back(&in);
    }
    return open;
  };
  RUNG_RETURN_IF_ERROR(check_input_spec(io, plan.spec));
  if (item.kind == InputItem::Kind::kTensors) {
    for (const auto& f : item.files) {
      auto v = read_any(f, io, plan.spec.max_tensor_bytes);
      if (!v) return v.error();
      std::string target;
      if (model_input(v->name) != io.inputs.end()) {
        target = v->name;
      } else if (model_input(f.stem().string()) != io.inputs.end()) {
        target = f.stem().string();
      } else if (f.stem().string().starts_with("input_")) {  // the ONNX test suites' input_N.pb, in input order
        try {
          const auto n = std::stoul(f.stem().string().substr(6));
          if (n < io.inputs.size()) target = io.inputs[n].name;
        } catch (const std::exception&) {
        }
      }
      if (target.empty()) {
        auto open = open_inputs([](const TensorInfo&) { return true; });
        if (item.files.size() == 1 && open.size() == 1) target = open.front()->name;
      }
      if (target.empty()) {
        return Error{ErrorCode::kInvalidArgument, fmt::format("{}: tensor '{}' matches no input of the model (its inputs: {})", f.string(),
                                                              v->name, names_of(io.inputs))};
      }
      if (given.count(target)) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: a second tensor for input '{}'", f.string(), target)};
      v->name = target;
      if (v->kind == Value::Kind::kTensor) v->tensor.name = target;
      adopt_bfloat16(*v, model_input(target)->type);
      given[target] = std::move(*v);
    }
  } else if (item.kind == InputItem::Kind::kImage) {
    if (!plan.preprocess) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("{}: an image, but no preprocessing is declared (the gate file's "
                                                            "'preprocess', or --preprocess FILE)", where)};
    }
    std::string target = plan.image_input;
    if (target.empty()) {
      auto open = open_inputs([](const TensorInfo& t) { return t.is_tensor() && t.shape.size() == 4; });
      if (open.size() != 1) {
        return Error{ErrorCode::kInvalidArgument, fmt::format("{}: cannot tell which model input takes the image ({} candidates among {}); "
                                                              "name it as the preprocessing's \"input\"", where, open.size(), names_of(io.inputs))};
      }
      target = open.front()->name;
    } else if (model_input(target) == io.inputs.end()) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("the preprocessing's input '{}' is not an input of the model (its inputs: {})",
                                                            target, names_of(io.inputs))};
    }
    auto image = read_image(item.files.front(), plan.preprocess->channels == "GRAY" ? 1 : 3, plan.spec.max_tensor_bytes);
    if (!image) return image.error();
    auto shape = image_tensor_shape(image->width, image->height, *plan.preprocess, fmt::format("{} as input '{}'", where, target),
                                    plan.spec.max_tensor_bytes);
    if (!shape) return shape.error();
    given[target] = Value::of(image_to_tensor(*image, *plan.preprocess, target));
  }
  // The rest: None for an optional input, the spec's values, or seeded random values for random items.
  std::vector<TensorInfo> rest;
  for (const auto& in : io.inputs) {
    if (given.count(in.name)) continue;
    if (in.kind() == Value::Kind::kOptional && !plan.spec.values.count(in.name)) {
      given[in.name] = Value::optional(in.name, std::nullopt);
      continue;
    }
    if (item.kind != InputItem::Kind::kRandom && !plan.spec.values.count(in.name)) {
      return Error{ErrorCode::kInvalidArgument,
                   fmt::format("{}: gives no tensor for model input '{}' (add one, or a value under the gate file's inputs.values)", where, in.name)};
    }
    rest.push_back(in);
  }
  if (!rest.empty()) {
    auto made = generate_inputs(rest, plan.spec, plan.seed + item.index);
    if (!made) return Error{made.error().code, fmt::format("{}: {}", where, made.error().message)};
    for (auto& t : *made) {
      const std::string name = t.name;  // the right of '=' runs first and moves t
      given[name] = Value::of(std::move(t));
    }
  }
  std::vector<Value> out;
  for (const auto& in : io.inputs) {
    Value& v = given.at(in.name);
    RUNG_RETURN_IF_ERROR(check_value(v, in, where));
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace rung
