#include "sim_ep_knobs.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <cstring>
#include <memory>
#include <vector>

namespace rung::sim_ep {

namespace {

struct StageEntry {
  Stage stage;
  std::string_view name;
  const char* message;
};

constexpr StageEntry kStages[] = {
    {Stage::Factory, "factory", "RungSimAccelerator: simulated failure at factory creation"},
    {Stage::CreateEp, "create_ep", "RungSimAccelerator: simulated failure at EP creation"},
    {Stage::GetCapability, "get_capability", "RungSimAccelerator: simulated failure in GetCapability"},
    {Stage::Compile, "compile", "RungSimAccelerator: simulated failure at compile"},
    {Stage::Compute, "compute", "RungSimAccelerator: simulated failure at compute"},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

template <typename F>
std::optional<std::string> for_each_item(std::string_view list, F f) {
  while (true) {
    const size_t comma = list.find(',');
    const std::string_view item = trim(list.substr(0, comma));
    if (!item.empty())
      if (auto err = f(item)) return err;
    if (comma == std::string_view::npos) return std::nullopt;
    list.remove_prefix(comma + 1);
  }
}

std::optional<std::string> parse_stages(std::string_view key, std::string_view value, std::set<Stage>& out) {
  out.clear();
  return for_each_item(value, [&](std::string_view item) -> std::optional<std::string> {
    if (item == "none") return std::nullopt;
    for (const auto& e : kStages)
      if (e.name == item) {
        out.insert(e.stage);
        return std::nullopt;
      }
    return "invalid stage '" + std::string(item) + "' for knob '" + std::string(key) +
           "' (expected factory, create_ep, get_capability, compile or compute)";
  });
}

std::optional<std::string> parse_ops(std::string_view value, std::set<OpKind>& out) {
  out.clear();
  return for_each_item(value, [&](std::string_view item) -> std::optional<std::string> {
    auto op = op_kind_from_name(item);
    if (!op) return "unsupported op type '" + std::string(item) + "' in knob 'ops' (supported: " + all_op_names() + ")";
    out.insert(*op);
    return std::nullopt;
  });
}

std::optional<std::string> parse_int(std::string_view key, const std::string& value, int64_t& out) {
  char* end = nullptr;
  const long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || end == nullptr || *end != '\0' || v < 0)
    return "invalid value '" + value + "' for knob '" + std::string(key) + "' (expected a non-negative integer)";
  out = v;
  return std::nullopt;
}

std::optional<std::string> parse_float(std::string_view key, const std::string& value, float& out) {
  char* end = nullptr;
  const float v = std::strtof(value.c_str(), &end);
  if (value.empty() || end == nullptr || *end != '\0')
    return "invalid value '" + value + "' for knob '" + std::string(key) + "' (expected a number)";
  out = v;
  return std::nullopt;
}

std::mutex& trace_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

const char* stage_name(Stage stage) {
  for (const auto& e : kStages)
    if (e.stage == stage) return e.name.data();
  return "?";
}

const char* stage_failure_message(Stage stage) {
  for (const auto& e : kStages)
    if (e.stage == stage) return e.message;
  return "RungSimAccelerator: simulated failure";
}

std::optional<std::string> knob_from_env(std::string_view key) {
  std::string name = "RUNG_SIM_EP_";
  for (char c : key) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::optional<std::string> parse_knobs(const KnobSource& primary, Knobs& out) {
  auto lookup = [&](std::string_view key) -> std::optional<std::string> {
    if (primary)
      if (auto v = primary(key)) return v;
    return knob_from_env(key);
  };
  Knobs k;
  std::optional<std::string> err;
  const std::string ops = lookup("ops").value_or(default_op_names());
  if ((err = parse_ops(ops, k.ops))) return err;
  if (auto v = lookup("perturb"))
    if ((err = parse_float("perturb", *v, k.perturb))) return err;
  if (auto v = lookup("fail_at"))
    if ((err = parse_stages("fail_at", *v, k.fail_at))) return err;
  if (auto v = lookup("abort_at"))
    if ((err = parse_stages("abort_at", *v, k.abort_at))) return err;
  if (auto v = lookup("hang_at"))
    if ((err = parse_stages("hang_at", *v, k.hang_at))) return err;
  if (auto v = lookup("exit_at"))
    if ((err = parse_stages("exit_at", *v, k.exit_at))) return err;
  if (auto v = lookup("grow_at"))
    if ((err = parse_stages("grow_at", *v, k.grow_at))) return err;
  if (auto v = lookup("fork_at"))
    if ((err = parse_stages("fork_at", *v, k.fork_at))) return err;
  if (auto v = lookup("compile_delay_ms"))
    if ((err = parse_int("compile_delay_ms", *v, k.compile_delay_ms))) return err;
  if (auto v = lookup("compute_delay_us"))
    if ((err = parse_int("compute_delay_us", *v, k.compute_delay_us))) return err;
  if (auto v = lookup("memoise")) {
    if (*v != "0" && *v != "1") return "invalid value '" + *v + "' for knob 'memoise' (expected 0 or 1)";
    k.memoise = *v == "1";
  }
  k.trace_file = lookup("trace_file").value_or("");
  if (auto v = lookup("reject_nodes")) {
    std::string item;
    for (char c : *v + ",") {
      if (c != ',') {
        item += c;
      } else if (!item.empty()) {
        k.reject_nodes.push_back(item);
        item.clear();
      }
    }
  }
  out = std::move(k);
  return std::nullopt;
}

void trace(const Knobs& knobs, std::string_view event, std::string_view detail) {
  if (knobs.trace_file.empty()) return;
  std::string line;
  line.append(event).append(" ").append(detail).append("\n");
  std::lock_guard<std::mutex> lock(trace_mutex());
  if (std::FILE* f = std::fopen(knobs.trace_file.c_str(), "a")) {
    std::fwrite(line.data(), 1, line.size(), f);
    std::fclose(f);
  }
}

bool simulate_stage(const Knobs& knobs, Stage stage) {
  if (knobs.abort_at.count(stage)) {
    trace(knobs, "abort", stage_name(stage));
    std::abort();
  }
  if (knobs.hang_at.count(stage)) {
    trace(knobs, "hang", stage_name(stage));
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  if (knobs.exit_at.count(stage)) {
    trace(knobs, "exit", stage_name(stage));
    std::exit(0);
  }
  if (knobs.fork_at.count(stage)) {
    const long pid = leave_a_child_behind();
    if (pid > 0) trace(knobs, "fork", std::to_string(pid) + " " + stage_name(stage));
  }
  if (knobs.grow_at.count(stage)) {
    trace(knobs, "grow", stage_name(stage));
    // Kept, never freed: what a leaking provider holds. Each chunk is written, so it is resident.
    static std::vector<std::unique_ptr<char[]>> held;
    constexpr std::size_t kChunk = 64u << 20;
    for (;;) {
      held.emplace_back(new char[kChunk]);
      std::memset(held.back().get(), 1, kChunk);
    }
  }
  return knobs.fail_at.count(stage) != 0;
}

}  // namespace rung::sim_ep
