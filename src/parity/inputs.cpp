#include "parity/inputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "session/inputs.h"
#include "session/npy_file.h"
#include "session/tensor_file.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

bool is_tensor_file(const fs::path& p) { return p.extension() == ".pb" || p.extension() == ".npy"; }
bool hidden(const fs::path& p) { return p.filename().string().starts_with("."); }

Result<Tensor> read_any(const fs::path& p, std::uint64_t max_bytes) {
  return p.extension() == ".npy" ? read_npy_file(p, max_bytes) : read_tensor_file(p, max_bytes);
}

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
  if (!fs::is_directory(dir, ec)) return Error{ErrorCode::kNotFound, fmt::format("{}: not a directory", dir.string())};
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!hidden(e.path())) entries.push_back(e.path());
  }
  std::sort(entries.begin(), entries.end());
  std::vector<InputItem> items;
  for (const auto& p : entries) {
    InputItem item;
    item.name = p.filename().string();
    if (fs::is_directory(p, ec)) {
      for (const auto& f : fs::directory_iterator(p, ec)) {
        if (is_tensor_file(f.path())) item.files.push_back(f.path());
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
  if (items.empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: the input directory is empty", dir.string())};
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

Result<std::vector<Tensor>> make_item_tensors(const InputItem& item, const ModelIo& io, const InputPlan& plan) {
  const std::string where = item.files.empty() ? item.name : item.files.front().string();
  std::map<std::string, Tensor> given;
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
  if (auto s = check_input_spec(io, plan.spec); !s) return s.error();
  if (item.kind == InputItem::Kind::kTensors) {
    for (const auto& f : item.files) {
      auto t = read_any(f, plan.spec.max_tensor_bytes);
      if (!t) return t.error();
      std::string target;
      if (model_input(t->name) != io.inputs.end()) {
        target = t->name;
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
                                                              t->name, names_of(io.inputs))};
      }
      if (given.count(target)) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: a second tensor for input '{}'", f.string(), target)};
      t->name = target;
      given[target] = std::move(*t);
    }
  } else if (item.kind == InputItem::Kind::kImage) {
    if (!plan.preprocess) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("{}: an image, but no preprocessing is declared (the gate file's "
                                                            "'preprocess', or --preprocess FILE)", where)};
    }
    std::string target = plan.image_input;
    if (target.empty()) {
      auto open = open_inputs([](const TensorInfo& t) { return t.shape.size() == 4; });
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
    given[target] = image_to_tensor(*image, *plan.preprocess, target);
  }
  // The rest: the spec's values, or seeded random values for random items.
  std::vector<TensorInfo> rest;
  for (const auto& in : io.inputs) {
    if (given.count(in.name)) continue;
    if (item.kind != InputItem::Kind::kRandom && !plan.spec.values.count(in.name)) {
      return Error{ErrorCode::kInvalidArgument,
                   fmt::format("{}: gives no tensor for model input '{}' (add one, or a value under the gate file's inputs.values)", where, in.name)};
    }
    rest.push_back(in);
  }
  if (!rest.empty()) {
    auto made = generate_inputs(rest, plan.spec, plan.seed + item.index);
    if (!made) return Error{made.error().code, fmt::format("{}: {}", where, made.error().message)};
    for (auto& t : *made) given[t.name] = std::move(t);
  }
  std::vector<Tensor> out;
  for (const auto& in : io.inputs) {
    Tensor& t = given.at(in.name);
    if (auto s = check_tensor(t, in, where); !s) return s.error();
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace rung
