#include "parity/gate_file.h"

#include <fmt/format.h>

#include "os/json_input.h"
#include "rung/json_text.h"
#include "os/read_file.h"

namespace rung {
namespace {

Result<std::unique_ptr<ParityGate>> make_gate(const nlohmann::json& j, const std::filesystem::path& base_dir, const std::string& where) {
  if (!j.is_object()) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: a gate must be a JSON object", where)};
  if (!j.contains("decoder") || !j["decoder"].is_string()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: names no 'decoder'", where)};
  }
  const std::string decoder = j["decoder"];
  GateParams p(j, fmt::format("{} ({})", where, decoder));
  p.skip("decoder");
  if (decoder == "tensor") return make_tensor_gate(p);
  if (decoder == "classification") return make_classification_gate(p);
  if (decoder == "slots") return make_slots_gate(p);
  if (decoder == "boxes") return make_boxes_gate(p);
  if (decoder == "embedding") return make_embedding_gate(p);
  if (decoder == "text") return make_text_gate(p, base_dir);
  if (decoder == "mask") return make_mask_gate(p);
  return Error{ErrorCode::kInvalidArgument,
               fmt::format("{}: unknown decoder '{}' (known: tensor, classification, slots, boxes, embedding, text, mask)", where, decoder)};
}

}  // namespace

Result<GateFile> parse_gate_file(const std::string& text, const std::filesystem::path& base_dir, const std::string& where) {
  auto parsed = parse_json(text);
  if (!parsed) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: {}", where, parsed.error().message)};
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: must be a JSON object", where)};
  GateFile g;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (key == "model") continue;
    if (key == "preprocess") {
      auto p = ImagePreprocess::from_json_text(json_text(*it));
      if (!p) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: preprocess: {}", where, p.error().message)};
      g.preprocess = *p;
      if (it->contains("input")) g.image_input = (*it)["input"].is_string() ? (*it)["input"].get<std::string>() : "";
    } else if (key == "inputs") {
      auto spec = InputSpec::from_json_text(json_text(*it), base_dir);
      if (!spec) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: inputs: {}", where, spec.error().message)};
      g.inputs = *spec;
      if (!g.inputs.tensors_dir.empty()) {
        return Error{ErrorCode::kInvalidArgument, fmt::format("{}: inputs: recorded tensors come from the input directory, not 'tensors'", where)};
      }
    } else if (key == "gates") {
      if (!it->is_array() || it->empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: 'gates' must be a non-empty list", where)};
      for (std::size_t i = 0; i < it->size(); ++i) {
        auto gate = make_gate((*it)[i], base_dir, fmt::format("{}: gate {}", where, i + 1));
        if (!gate) return gate.error();
        g.gates.push_back(std::move(*gate));
      }
    } else {
      return Error{ErrorCode::kInvalidArgument, fmt::format("{}: unknown key '{}' (expected model, preprocess, inputs, gates)", where, key)};
    }
  }
  if (g.gates.empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: declares no 'gates'", where)};
  return g;
}

Result<GateFile> read_gate_file(const std::filesystem::path& path) {
  auto text = read_input_file(path, FileKind::kDocument);
  if (!text) return text.error();
  return parse_gate_file(*text, path.parent_path(), path.string());
}

std::vector<std::filesystem::path> files_named_by(const GateFile& gates) {
  std::vector<std::filesystem::path> out;
  for (const auto& g : gates.gates) {
    for (const auto& f : g->files_read()) out.emplace_back(f);
  }
  return out;
}

std::vector<std::filesystem::path> files_named_by_gate_file(const std::filesystem::path& gate_file) {
  if (gate_file.empty()) return {};
  auto g = read_gate_file(gate_file);
  return g ? files_named_by(*g) : std::vector<std::filesystem::path>{};
}

std::unique_ptr<ParityGate> default_tensor_gate() {
  static const nlohmann::json no_params = nlohmann::json::object();
  GateParams p(no_params, "default tensor gate");
  return std::move(*make_tensor_gate(p));
}

Result<ImagePreprocess> read_preprocess_file(const std::filesystem::path& path, std::string* image_input) {
  auto j = read_json_file(path);
  if (!j) return j.error();
  auto p = ImagePreprocess::from_json_text(json_text(*j));
  if (!p) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: {}", path.string(), p.error().message)};
  if (image_input != nullptr && j->contains("input") && (*j)["input"].is_string()) *image_input = (*j)["input"];
  return p;
}

}  // namespace rung
