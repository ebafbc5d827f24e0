#include "jobs/parity_protocol.h"

namespace rung {
namespace {

const char* wrapper_name(Value::Kind kind) { return kind == Value::Kind::kSequence ? "sequence" : "optional"; }

}  // namespace

void to_json(nlohmann::json& j, const TensorInfo& t) {
  nlohmann::json wrappers = nlohmann::json::array();
  for (auto w : t.wrappers) wrappers.push_back(wrapper_name(w));
  j = {{"name", t.name}, {"type", element_type_name(t.type)}, {"shape", t.shape}, {"symbolic_dims", t.symbolic_dims},
       {"wrappers", wrappers}, {"other", t.other}};
}

void from_json(const nlohmann::json& j, TensorInfo& t) {
  t.name = j.at("name");
  t.type = element_type_from_name(j.at("type").get<std::string>()).value_or(ElementType::kUnsupported);
  read_json(j.at("shape"), t.shape);
  t.symbolic_dims = j.at("symbolic_dims").get<std::vector<std::string>>();
  t.wrappers.clear();
  for (const auto& w : j.at("wrappers")) t.wrappers.push_back(w.get<std::string>() == "sequence" ? Value::Kind::kSequence : Value::Kind::kOptional);
  t.other = j.at("other");
}

}  // namespace rung
