#include "jobs/worker.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "os/atomic_file.h"
#include "os/json_input.h"
#include "os/read_file.h"

namespace rung {
namespace {

const JobKind* find_kind(std::span<const JobKind> kinds, std::string_view name) {
  for (const auto& k : kinds) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

int usage(std::span<const JobKind> kinds) {
  std::vector<std::string_view> names;
  for (const auto& k : kinds) names.push_back(k.name);
  fmt::print(stderr, "usage: rung-probe-worker KIND JOB.json [--channel=FD]\n  KIND: {}\n"
                     "Started by rung (probe, bench, prepare, parity, conform); writes result.json beside the job.\n",
             fmt::join(names, ", "));
  return 2;
}

}  // namespace

int worker_main(int argc, char** argv, std::span<const JobKind> kinds) {
  const JobKind* kind = argc >= 3 ? find_kind(kinds, argv[1]) : nullptr;
  std::optional<int> channel_fd;
  if (argc == 4 && std::sscanf(argv[3], "--channel=%d", &channel_fd.emplace()) != 1) channel_fd.reset();
  if (kind == nullptr || argc > 4 || (argc == 4 && !channel_fd)) return usage(kinds);

  const std::filesystem::path job_file = argv[2];
  std::optional<LineChannel> channel;
  if (channel_fd) channel.emplace(*channel_fd);
  nlohmann::json result;
  try {
    auto job = read_json_file(job_file);
    if (!job) {
      result = {{"ok", false}, {"stage", "job"}, {"error", fmt::format("malformed {} job {}", kind->name, job.error().message)}};
    } else {
      result = kind->run(*job, channel ? &*channel : nullptr);
    }
  } catch (const nlohmann::json::exception& e) {
    result = {{"ok", false}, {"stage", "job"}, {"error", fmt::format("malformed {} job {}: {}", kind->name, job_file.string(), e.what())}};
  }
  if (auto s = write_file_atomically(job_file.parent_path() / "result.json", result.dump(2)); !s) {
    fmt::print(stderr, "{}\n", s.error().message);
    return 1;
  }
  return 0;
}

}  // namespace rung
