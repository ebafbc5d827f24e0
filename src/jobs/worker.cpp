#include "jobs/worker.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "os/atomic_file.h"
#include "os/json_input.h"
#include "rung/json_text.h"
#include "os/read_file.h"
#include "os/this_process.h"
#include "rung/path_text.h"
#include "rung/print.h"
#include "rung/result.h"

namespace rung {

nlohmann::json failed_result(const std::string& error) { return {{"ok", false}, {"error", error}}; }
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
  rung::print(stderr, "usage: rung-probe-worker KIND JOB.json [--channel=FD] [--parent=PID] [--memory-limit-mb=N]\n  KIND: {}\n"
                     "Started by rung (probe, bench, prepare, parity, conform); writes result.json beside the job.\n",
             fmt::join(names, ", "));
  return 2;
}

struct WorkerFlags {
  std::optional<int> channel_fd;
  std::optional<long> parent;
  std::optional<unsigned long long> memory_limit_mb;
};

// --channel=FD and --parent=PID after KIND JOB.json, in any order; nullopt for anything else.
std::optional<WorkerFlags> parse_flags(int argc, char** argv) {
  WorkerFlags flags;
  for (int i = 3; i < argc; ++i) {
    int value = 0;
    char rest = 0;
    if (std::sscanf(argv[i], "--channel=%d%c", &value, &rest) == 1 && !flags.channel_fd) {
      flags.channel_fd = value;
    } else if (std::sscanf(argv[i], "--parent=%d%c", &value, &rest) == 1 && value > 1 && !flags.parent) {
      flags.parent = value;
    } else if (unsigned long long mib = 0;
               std::sscanf(argv[i], "--memory-limit-mb=%llu%c", &mib, &rest) == 1 && mib > 0 && !flags.memory_limit_mb) {
      flags.memory_limit_mb = mib;
    } else {
      return std::nullopt;
    }
  }
  return flags;
}

// The dynamic loader's words when mapping a library failed for want of memory (ENOMEM).
bool ran_out_of_memory_loading(const nlohmann::json& result) {
  if (!result.is_object() || !result.contains("error") || !result["error"].is_string()) return false;
  const std::string& error = result["error"].get_ref<const std::string&>();
  return error.find("failed to map segment from shared object") != std::string::npos || error.find("Cannot allocate memory") != std::string::npos;
}

}  // namespace

int worker_main(int argc, char** argv, std::span<const JobKind> kinds) {
  crash_without_waiting();  // a provider that crashes ends this worker with its code, not in a dialog
  const JobKind* kind = argc >= 3 ? find_kind(kinds, argv[1]) : nullptr;
  const std::optional<WorkerFlags> flags = parse_flags(argc, argv);
  if (kind == nullptr || !flags) return usage(kinds);
  if (flags->parent && !end_with_parent(*flags->parent)) {
    rung::print(stderr, "rung-probe-worker: process {} that started this job is gone; not running it\n", *flags->parent);
    return 3;
  }
  const std::optional<int>& channel_fd = flags->channel_fd;
  unsigned long long limit_in_force = 0;
  if (flags->memory_limit_mb) {
    // A provider that allocates without end fails here, and says so in the log its caller quotes.
    if (auto limited = limit_this_process_data(*flags->memory_limit_mb); !limited) {
      rung::print(stderr, "rung-probe-worker: {}\n", limited.error().message);
    } else {
      static unsigned long long limit_mb = 0;
      limit_mb = *flags->memory_limit_mb;
      limit_in_force = limit_mb;
      std::set_new_handler([] {
        // Nothing may allocate here: the line is made in place.
        char line[128];
        const int n = std::snprintf(line, sizeof line, "rung-probe-worker: out of memory: the job reached its limit of %llu MiB\n", limit_mb);
        if (n > 0) print_verbatim(stderr, std::string_view(line, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof line - 1)));
        std::fflush(stderr);
        std::_Exit(kWorkerOutOfMemory);  // the runner's verdict: ran out of memory, not a crash of unknown cause
      });
    }
  }

  const std::filesystem::path job_file = path_from_utf8(argv[2]);
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
  } catch (const LibraryUnavailable& e) {  // a system library loaded on use (os/system_library.h) would not load
    result = {{"ok", false}, {"stage", "job"}, {"error", e.what()}};
  }
  // Under a limit, a library whose segments the loader could not map (ONNX Runtime,
  // a provider) ran out of memory as surely as an allocation that failed: said so,
  // not as a runtime that will not load or a model that cannot.
  if (limit_in_force > 0 && ran_out_of_memory_loading(result)) {
    rung::print(stderr, "rung-probe-worker: out of memory: the job reached its limit of {} MiB while loading a library\n", limit_in_force);
    return kWorkerOutOfMemory;
  }
  if (auto s = write_file_atomically(job_file.parent_path() / "result.json", json_text(result, 2)); !s) {
    rung::print(stderr, "{}\n", s.error().message);
    return 1;
  }
  return 0;
}

}  // namespace rung
