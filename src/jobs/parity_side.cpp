#include "jobs/parity_side.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>

#include "jobs/parity_protocol.h"
#include "session/session.h"
#include "session/tensor_file.h"

namespace rung {
namespace {

class Channel {
 public:
  explicit Channel(int fd) : fd_(fd) {}
  bool send(const nlohmann::json& j) {
    const std::string line = j.dump() + "\n";
    std::size_t sent = 0;
    while (sent < line.size()) {
      const ssize_t n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }
  // False when the parent closed the socket.
  bool receive(std::string& line) {
    for (;;) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return true;
      }
      char chunk[4096];
      const ssize_t n = read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buffer_;
};

Result<RungSpec> resolve_rung(OrtProcess& process, const std::string& name) {
  const bool is_library = name.find('/') != std::string::npos || name.ends_with(".so");
  if (is_library) {
    auto eps = process.plugin_ep_names(name);
    if (!eps) return eps.error();
    return plugin_rung(eps->front(), name);
  }
  const RungSpec* rung = find_rung(name);
  if (rung == nullptr) return Error{ErrorCode::kInvalidArgument, fmt::format("unknown rung '{}'", name)};
  if (!rung->provider.empty() && rung->append != AppendMethod::kNone && !process.build().has_provider(rung->provider)) {
    return Error{ErrorCode::kUnsupported, fmt::format("ONNX Runtime {} at {} does not carry {}", process.build().version,
                                                      process.build().library.string(), rung->provider)};
  }
  return *rung;
}

int serve(const ParityJob& job, Channel& channel) {
  auto refuse = [&](const char* stage, const std::string& error) {
    channel.send({{"ready", false}, {"stage", stage}, {"error", error}});
    return 1;
  };
  auto build = load_runtime_build(job.runtime_library, job.allow_writable_runtime);
  if (!build) return refuse("runtime", build.error().message);
  auto process = OrtProcess::install(*build);
  if (!process) return refuse("runtime", process.error().message);
  auto rung = resolve_rung(**process, job.rung);
  if (!rung) return refuse("rung", rung.error().message);
  SessionSettings settings;
  settings.rung = *rung;
  settings.intra_op_threads = job.threads;
  settings.provider.extra = job.provider_options;
  auto session = open_session(**process, job.model, settings);
  if (!session) return refuse("build", session.error().message);
  const ModelIo io = describe_session(*session);
  if (!channel.send({{"ready", true}, {"version", build->version}, {"api", build->api_version}, {"rung", rung->display},
                     {"io", model_io_to_json(io)}})) {
    return 1;
  }
  for (std::string line; channel.receive(line);) {
    std::size_t index = 0;
    std::filesystem::path dir;
    try {
      const auto j = nlohmann::json::parse(line);
      index = j.at("run");
      dir = j.at("inputs").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
      channel.send({{"done", nullptr}, {"error", fmt::format("malformed request: {}", e.what())}});
      return 2;
    }
    auto fail = [&](const std::string& error) { return channel.send({{"done", index}, {"error", error}}); };
    std::vector<Tensor> inputs;
    std::string problem;
    for (std::size_t k = 0; k < io.inputs.size() && problem.empty(); ++k) {
      auto t = read_tensor_file(dir / fmt::format("input_{}.pb", k));
      if (!t) problem = t.error().message;
      else inputs.push_back(std::move(*t));
    }
    if (!problem.empty()) {
      if (!fail(problem)) return 1;
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto outputs = run_session(*session, inputs);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!outputs) {
      if (!fail(outputs.error().message)) return 1;
      continue;
    }
    const auto out_dir = job.outputs_dir / std::to_string(index);
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    for (std::size_t k = 0; k < outputs->size() && problem.empty(); ++k) {
      if (auto s = write_tensor_file((*outputs)[k], out_dir / fmt::format("output_{}.pb", k)); !s) problem = s.error().message;
    }
    if (!(problem.empty() ? channel.send({{"done", index}, {"ms", ms}}) : fail(problem))) return 1;
  }
  return 0;
}

}  // namespace

int parity_worker_main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: rung-probe-worker parity JOB.json (started by `rung parity`, which holds the other end of its socket)\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  auto job = parity_job_from_json(text.str());
  if (!job) {
    fmt::print(stderr, "{}: {}\n", argv[1], job.error().message);
    return 2;
  }
  Channel channel(job->channel_fd);
  return serve(*job, channel);
}

}  // namespace rung
