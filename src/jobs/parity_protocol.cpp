#include "jobs/parity_protocol.h"

#include <fmt/format.h>

namespace rung {
namespace {

// Types travel by name ("float32", "string"), never by enum number.
nlohmann::json info_json(const TensorInfo& t) {
  nlohmann::json wrappers = nlohmann::json::array();
  for (auto w : t.wrappers) wrappers.push_back(w == Value::Kind::kSequence ? "sequence" : "optional");
  return {{"name", t.name}, {"type", element_type_name(t.type)}, {"shape", t.shape}, {"symbolic", t.symbolic_dims},
          {"wrappers", wrappers}, {"other", t.other}};
}

TensorInfo info_of(const nlohmann::json& j) {
  TensorInfo t;
  t.name = j.at("name");
  t.type = element_type_from_name(j.at("type").get<std::string>()).value_or(ElementType::kUnsupported);
  t.shape = j.at("shape").get<std::vector<std::int64_t>>();
  t.symbolic_dims = j.at("symbolic").get<std::vector<std::string>>();
  for (const auto& w : j.at("wrappers")) t.wrappers.push_back(w.get<std::string>() == "sequence" ? Value::Kind::kSequence : Value::Kind::kOptional);
  t.other = j.at("other");
  return t;
}

}  // namespace

std::string parity_job_to_json(const ParityJob& job) {
  return nlohmann::json{{"runtime_library", job.runtime_library.string()},
                        {"allow_writable_runtime", job.allow_writable_runtime},
                        {"model", job.model.string()},
                        {"rung", job.rung},
                        {"threads", job.threads},
                        {"provider_options", job.provider_options},
                        {"outputs_dir", job.outputs_dir.string()},
                        {"channel_fd", job.channel_fd}}
      .dump(2);
}

Result<ParityJob> parity_job_from_json(const std::string& text) {
  try {
    const auto j = nlohmann::json::parse(text);
    ParityJob job;
    job.runtime_library = j.at("runtime_library").get<std::string>();
    job.allow_writable_runtime = j.at("allow_writable_runtime");
    job.model = j.at("model").get<std::string>();
    job.rung = j.at("rung");
    job.threads = j.at("threads");
    job.provider_options = j.at("provider_options").get<std::map<std::string, std::string>>();
    job.outputs_dir = j.at("outputs_dir").get<std::string>();
    job.channel_fd = j.at("channel_fd");
    return job;
  } catch (const nlohmann::json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("malformed parity job: {}", e.what())};
  }
}

nlohmann::json model_io_to_json(const ModelIo& io) {
  nlohmann::json in = nlohmann::json::array(), out = nlohmann::json::array();
  for (const auto& t : io.inputs) in.push_back(info_json(t));
  for (const auto& t : io.outputs) out.push_back(info_json(t));
  return {{"inputs", in}, {"outputs", out}};
}

ModelIo model_io_from_json(const nlohmann::json& j) {
  ModelIo io;
  for (const auto& t : j.at("inputs")) io.inputs.push_back(info_of(t));
  for (const auto& t : j.at("outputs")) io.outputs.push_back(info_of(t));
  return io;
}

}  // namespace rung
