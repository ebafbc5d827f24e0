#include "jobs/parity_side.h"

#include <fmt/format.h>

#include <chrono>

#include "jobs/parity_protocol.h"
#include "jobs/target_session.h"
#include "os/json_input.h"
#include "session/tensor_file.h"

namespace rung {
namespace {

nlohmann::json failed(const std::string& error) { return {{"ok", false}, {"error", error}}; }

// The rung as the command line named it, completed on the loaded build.
Result<RungSpec> resolve_rung(OrtProcess& process, const RungSpec& named) {
  if (!named.plugin_library.empty()) {
    auto eps = process.plugin_ep_names(named.plugin_library);
    if (!eps) return eps.error();
    return plugin_rung(eps->front(), named.plugin_library);
  }
  const RungSpec* rung = find_rung(named.name);
  if (rung == nullptr) return Error{ErrorCode::kInvalidArgument, fmt::format("unknown rung '{}'", named.name)};
  if (!rung->provider.empty() && rung->append != AppendMethod::kNone && !process.build().has_provider(rung->provider)) {
    return Error{ErrorCode::kUnsupported, fmt::format("ONNX Runtime {} at {} does not carry {}", process.build().version,
                                                      process.build().library.string(), rung->provider)};
  }
  return *rung;
}

struct OpenSide {
  Ort::Session session{nullptr};
  ModelIo io;
};

// Builds the side's session and says so to the parent (ready, or why not).
Result<OpenSide> open_side(const ParityJob& job, LineChannel& channel) {
  auto refuse = [&](const char* stage, const std::string& error) -> Error {
    channel.send(nlohmann::json{{"ready", false}, {"stage", stage}, {"error", error}}.dump());
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
  OpenSide side{std::move(*session), {}};
  side.io = describe_session(side.session);
  const RuntimeBuild& build = (*process)->build();
  if (!channel.send(nlohmann::json{{"ready", true}, {"version", build.version}, {"api", build.api_version}, {"rung", rung->display},
                                   {"io", side.io}}
                        .dump())) {
    return Error{ErrorCode::kIo, "the parent closed the channel"};
  }
  return side;
}

// Runs one input: reads its tensors from `dir`, writes the outputs under OUTPUTS_DIR/INDEX.
Result<double> run_input(OpenSide& side, const std::filesystem::path& dir, const std::filesystem::path& out_dir) {
  std::vector<Tensor> inputs;
  for (std::size_t k = 0; k < side.io.inputs.size(); ++k) {
    auto t = read_tensor_file(dir / fmt::format("input_{}.pb", k));
    if (!t) return t.error();
    inputs.push_back(std::move(*t));
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto outputs = run_session(side.session, inputs);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!outputs) return outputs.error();
  if (auto s = write_output_directory(*outputs, out_dir); !s) return s.error();
  return ms;
}

}  // namespace

nlohmann::json parity_job_entry(const nlohmann::json& j, LineChannel* channel) {
  if (channel == nullptr) return failed("a parity job answers over a channel; none was given");
  const ParityJob job = j.get<ParityJob>();
  auto side = open_side(job, *channel);
  if (!side) return failed(side.error().message);
  for (std::string line; channel->receive(line) == LineChannel::Read::kLine;) {
    std::size_t index = 0;
    std::filesystem::path dir;
    std::string problem;
    try {
      auto request = parse_json(line);
      if (request) {
        index = request->at("run");
        dir = request->at("inputs").get<std::string>();
      } else {
        problem = request.error().message;
      }
    } catch (const nlohmann::json::exception& e) {
      problem = e.what();
    }
    if (!problem.empty()) {
      const std::string error = fmt::format("malformed request: {}", problem);
      channel->send(nlohmann::json{{"done", nullptr}, {"error", error}}.dump());
      return failed(error);
    }
    auto ms = run_input(*side, dir, job.outputs_dir / std::to_string(index));
    const auto answer = ms ? nlohmann::json{{"done", index}, {"ms", *ms}} : nlohmann::json{{"done", index}, {"error", ms.error().message}};
    if (!channel->send(answer.dump())) return failed("the parent closed the channel");
  }
  return {{"ok", true}};
}

}  // namespace rung
