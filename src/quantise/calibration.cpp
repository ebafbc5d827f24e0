#include "quantise/calibration.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <unordered_map>

#include "quantise/cpu_session.h"
#include "session/session.h"

namespace rung {

onnx::ModelProto exposing(const onnx::ModelProto& prepared, const std::vector<std::string>& tensors) {
  onnx::ModelProto m = prepared;
  std::set<std::string> present;
  for (const auto& o : m.graph().output()) present.insert(o.name());
  for (const auto& i : m.graph().input()) present.insert(i.name());
  for (const auto& t : tensors) {
    if (present.count(t)) continue;
    auto* o = m.mutable_graph()->add_output();
    o->set_name(t);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  return m;
}

Result<Calibrator> Calibrator::parse(const std::string& text) {
  Calibrator c;
  if (text == "minmax") return c;
  if (text == "entropy") {
    c.method = Method::kEntropy;
    return c;
  }
  if (text == "percentile" || text.starts_with("percentile=")) {
    c.method = Method::kPercentile;
    if (text.size() > 11) {
      try {
        std::size_t used = 0;
        c.percentile = std::stod(text.substr(11), &used);
        if (used != text.size() - 11) throw std::invalid_argument(text);
      } catch (const std::exception&) {
        return Error{ErrorCode::kInvalidArgument, fmt::format("calibrator '{}': the percentile must be a number", text)};
      }
      if (!(c.percentile > 50 && c.percentile <= 100)) {
        return Error{ErrorCode::kInvalidArgument, fmt::format("calibrator '{}': the percentile must be above 50 and at most 100", text)};
      }
    }
    return c;
  }
  return Error{ErrorCode::kInvalidArgument, fmt::format("unknown calibrator '{}' (expected minmax, percentile=P or entropy)", text)};
}

std::string Calibrator::name() const {
  switch (method) {
    case Method::kMinMax: return "minmax";
    case Method::kPercentile: return "percentile";
    case Method::kEntropy: return "entropy";
  }
  return "?";
}

Range Calibrator::range(const TensorStats& stats, int bits) const {
  switch (method) {
    case Method::kMinMax: return stats.minmax();
    case Method::kPercentile: return stats.percentile(percentile);
    case Method::kEntropy: return stats.entropy(bits);
  }
  return stats.minmax();
}

Result<std::vector<Tensor>> calibration_tensors(const InputItem& item, const ModelIo& io, const InputPlan& plan) {
  auto values = make_item_values(item, io, plan);
  if (!values) return values.error();
  std::vector<Tensor> tensors;
  for (auto& v : *values) {
    if (v.kind != Value::Kind::kTensor) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("input '{}' of {}: calibration takes tensor inputs only", v.name, item.name)};
    }
    tensors.push_back(std::move(v.tensor));
  }
  return tensors;
}

Result<Calibration> calibrate(OrtProcess& process, const onnx::ModelProto& prepared, const CalibrationOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  const std::filesystem::path file = o.work_dir / "calibration.onnx";
  auto prepared_session = open_exposed_on_cpu(process, prepared, o.tensors, file, o.threads);
  if (!prepared_session) return Error{prepared_session.error().code, fmt::format("the calibration session: {}", prepared_session.error().message)};

  Calibration c;
  std::unordered_map<std::string_view, TensorStats*> observed;
  for (const auto& t : o.tensors) {
    auto& stats = c.stats.emplace(t, TensorStats(o.calibrator.histogram_bins())).first->second;
    observed[c.stats.find(t)->first] = &stats;
  }
  // The statistics of one input's tensors are independent: folded on every core.
  const unsigned workers = o.threads > 0 ? static_cast<unsigned>(o.threads) : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::pair<TensorStats*, std::span<const float>>> work;
  auto fold = [&](std::string_view name, ElementType type, std::span<const std::byte> bytes) {
    auto it = observed.find(name);
    if (it != observed.end() && type == ElementType::kFloat) {
      work.emplace_back(it->second, std::span<const float>(reinterpret_cast<const float*>(bytes.data()), bytes.size() / sizeof(float)));
    }
  };
  auto fold_all = [&] {
    const auto t0 = Clock::now();
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
      for (std::size_t i; (i = next++) < work.size();) work[i].first->add(work[i].second);
    };
    for (const auto& w : work) c.values += w.second.size();
    {
      std::vector<std::jthread> pool;
      for (unsigned w = 1; w < std::min<std::size_t>(workers, work.size()); ++w) pool.emplace_back(worker);
      worker();
    }
    work.clear();
    c.statistics_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  };
  for (std::size_t i = 0; i < o.items.size(); ++i) {
    const InputItem& item = o.items[i];
    if (o.on_progress) o.on_progress(i, o.items.size(), item.name);
    auto inputs = calibration_tensors(item, prepared_session->io, o.plan);
    if (!inputs) return inputs.error();
    for (const auto& t : *inputs) fold(t.name, t.type, t.bytes);
    fold_all();
    const auto t0 = Clock::now();
    Clock::time_point ran_at;
    auto ran = run_session_visiting(*prepared_session, *inputs, [&](const std::vector<TensorView>& views) -> Status {
      ran_at = Clock::now();
      for (const auto& v : views) fold(v.name, v.type, v.bytes);
      fold_all();
      return {};
    });
    if (!ran) return Error{ran.error().code, fmt::format("calibration input {}: {}", item.name, ran.error().message)};
    c.run_seconds += std::chrono::duration<double>(ran_at - t0).count();
    ++c.inputs;
  }
  if (o.on_progress) o.on_progress(o.items.size(), o.items.size(), "");
  for (const auto& [name, stats] : c.stats) {
    if (!stats.seen()) {
      return Error{ErrorCode::kRuntime, fmt::format("tensor '{}' held no finite value over {} calibration inputs", name, c.inputs)};
    }
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return c;
}

}  // namespace rung
