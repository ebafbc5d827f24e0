#include "jobs/parity_side.h"

#include <fmt/format.h>

#include <chrono>

#include "jobs/parity_protocol.h"
#include "jobs/target_session.h"
#include "jobs/worker.h"
#include "jobs/worker_rung.h"
#include "os/json_form.h"
#include "os/json_input.h"
#include "rung/json_text.h"
#include "session/placement.h"
#include "session/tensor_file.h"
#include "rung/path_text.h"

namespace rung {
namespace {


struct OpenSide {
  PreparedSession prepared;
  OrtProcess* process = nullptr;
  SessionSettings settings;  // for a profiled session of its own, on a runtime that profiles no single run
  std::filesystem::path model;
};

// Builds the side's session and says so to the parent (ready, or why not).
Result<OpenSide> open_side(const ParityJob& job, LineChannel& channel) {
  auto refuse = [&](const char* stage, const std::string& error) -> Error {
    channel.send(json_text(nlohmann::json{{"ready", false}, {"stage", stage}, {"error", error}}));
    return Error{ErrorCode::kRuntime, error};
  };
  auto process = install_runtime(job.target);
  if (!process) return refuse("runtime", process.error().message);
  auto rung = resolve_rung(**process, job.target.rung);
  if (!rung) return refuse("rung", rung.error().message);
  JobTarget resolved = job.target;
  resolved.rung = *rung;
  auto session = open_session(**process, job.target.model, session_settings(resolved));
  if (!session) return refuse("build", session.error().message);
  auto prepared = prepare_session(std::move(*session));
  if (!prepared) return refuse("build", prepared.error().message);
  OpenSide side{std::move(*prepared), *process, session_settings(resolved), job.target.model};
  const RuntimeBuild& build = (*process)->build();
  if (!channel.send(json_text(nlohmann::json{{"ready", true}, {"version", build.version}, {"api", build.api_version}, {"rung", rung->display},
                                   {"io", side.prepared.io}}))) {
    return Error{ErrorCode::kIo, "the parent closed the channel"};
  }
  return side;
}

// Each input as the model declares it: a tensor, a sequence, an optional value.
Result<std::vector<Value>> read_inputs(const ModelIo& io, const std::filesystem::path& dir) {
  std::vector<Value> inputs;
  for (std::size_t k = 0; k < io.inputs.size(); ++k) {
    auto v = read_value_file(dir / path_from_utf8(fmt::format("input_{}.pb", k)), io.inputs[k].kind());
    if (!v) return v.error();
    v->name = io.inputs[k].name;
    if (v->kind == Value::Kind::kTensor) v->tensor.name = v->name;
    inputs.push_back(std::move(*v));
  }
  return inputs;
}

// Where the nodes ran: one profiled run of the inputs in `dir` (tensor inputs only).
nlohmann::json placement_answer(OpenSide& side, const std::filesystem::path& dir, const std::filesystem::path& profile_dir) {
  auto values = read_inputs(side.prepared.io, dir);
  if (!values) return {{"placement", nullptr}, {"error", values.error().message}};
  std::vector<Tensor> inputs;
  for (auto& v : *values) {
    if (v.kind != Value::Kind::kTensor) return {{"placement", nullptr}, {"error", "placement is read for tensor inputs only"}};
    inputs.push_back(std::move(v.tensor));
  }
  auto placement = profile_placement(*side.process, side.prepared, side.model, side.settings, inputs, profile_dir);
  if (!placement) return {{"placement", nullptr}, {"error", placement.error().message}};
  return {{"placement", *placement}};
}

// Runs one input: reads its values from `dir`, writes the outputs under OUTPUTS_DIR/INDEX.
Result<double> run_input(PreparedSession& side, const std::filesystem::path& dir, const std::filesystem::path& out_dir) {
  auto inputs = read_inputs(side.io, dir);
  if (!inputs) return inputs.error();
  const auto t0 = std::chrono::steady_clock::now();
  auto outputs = run_session_values(side, *inputs);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!outputs) return outputs.error();
  RUNG_RETURN_IF_ERROR(write_output_directory(*outputs, out_dir));
  return ms;
}

}  // namespace

nlohmann::json parity_job_entry(const nlohmann::json& j, LineChannel* channel) {
  if (channel == nullptr) return failed_result("a parity job answers over a channel; none was given");
  const ParityJob job = j.get<ParityJob>();
  auto side = open_side(job, *channel);
  if (!side) return failed_result(side.error().message);
  for (std::string line; channel->receive(line) == LineChannel::Read::kLine;) {
    std::size_t index = 0;
    std::filesystem::path dir;
    std::string problem;
    try {
      auto request = parse_json(line);
      if (!request) {
        problem = request.error().message;
      } else if (request->contains("placement")) {
        std::filesystem::path inputs_dir;
        read_json(request->at("placement"), inputs_dir);  // text, or path_bytes when not UTF-8
        if (!channel->send(json_text(placement_answer(*side, inputs_dir, job.outputs_dir / "profile")))) return failed_result("the parent closed the channel");
        continue;
      } else {
        read_json(request->at("run"), index);
        read_json(request->at("inputs"), dir);
      }
    } catch (const nlohmann::json::exception& e) {
      problem = e.what();
    }
    if (!problem.empty()) {
      const std::string error = fmt::format("malformed request: {}", problem);
      channel->send(json_text(nlohmann::json{{"done", nullptr}, {"error", error}}));
      return failed_result(error);
    }
    auto ms = run_input(side->prepared, dir, job.outputs_dir / path_from_utf8(std::to_string(index)));
    const auto answer = ms ? nlohmann::json{{"done", index}, {"ms", *ms}} : nlohmann::json{{"done", index}, {"error", ms.error().message}};
    if (!channel->send(json_text(answer))) return failed_result("the parent closed the channel");
  }
  return {{"ok", true}};
}

}  // namespace rung
