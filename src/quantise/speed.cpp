#include "quantise/speed.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "quantise/calibration.h"
#include "quantise/cpu_session.h"
#include "quantise/qdq.h"
#include "session/session.h"
#include "rung/ratio_text.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

bool is_conversion(const std::string& op) { return op == "QuantizeLinear" || op == "DequantizeLinear" || op == "DynamicQuantizeLinear"; }

bool is_integer_type(const std::string& t) {
  return t == "uint8" || t == "int8" || t == "uint16" || t == "int16" || t == "int32" || t == "uint32";
}

// ONNX Runtime's integer kernels; some list a float scale as their first input.
bool is_integer_kernel(const OpTime& o) {
  return o.op.rfind("QLinear", 0) == 0 || o.op == "QGemm" || o.op == "MatMulInteger" || o.op == "ConvInteger" ||
         o.op == "MatMulIntegerToFloat" || is_integer_type(o.input_type);
}

KernelTimes split(const NodePlacement& p, double run_ms) {
  KernelTimes k;
  k.run_ms = run_ms;
  k.ops = p.ops;
  for (const auto& o : p.ops) {
    const double ms = o.kernel_us / 1000.0;
    k.kernel_ms += ms;
    if (is_conversion(o.op)) {
      k.conversion_ms += ms;
      k.conversion_nodes += o.nodes;
    } else if (is_integer_kernel(o)) {
      k.integer_ms += ms;
    } else {
      k.float_ms += ms;
    }
  }
  return k;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

SpeedRule quantised_speed_rule() {
  SpeedRule r;
  r.acceptance_ratio = 1.0;
  r.min_gain = 0;
  r.confidence = 0.95;
  r.min_pairs = 6;  // the fewest whose widest interval reaches 95%: 2 / 2^6 = 3.1%
  return r;
}

SpeedJudgement SpeedEvidence::judgement() const {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < std::min(f32_runs_ms.size(), quantised_runs_ms.size()); ++i) {
    if (f32_runs_ms[i] > 0) ratios.push_back(quantised_runs_ms[i] / f32_runs_ms[i]);
  }
  SpeedJudgement j = judge_speed(ratios, quantised_speed_rule());
  // The probe counts a tie as slower (moving must gain); a form that ties f32 costs nothing, so it is no slower.
  if (j.call == SpeedCall::kSlower && j.low <= 1.0) j.call = SpeedCall::kWithinNoise;
  return j;
}

std::optional<std::string> speed_refusal(NumericForm form, QdqTarget target, const SpeedEvidence* speed, bool allow_slower) {
  if (speed == nullptr || allow_slower || target != QdqTarget::kCpu) return std::nullopt;
  if (form != NumericForm::kInt8 && !weights_only(form)) return std::nullopt;
  const SpeedJudgement j = speed->judgement();
  if (j.call != SpeedCall::kSlower) return std::nullopt;
  return fmt::format("speed · slower than f32 on this CPU ({} its time){}", ratio_range_text(j.low, j.high),
                     weights_only(form) ? "" : "; --form w8 stores the weights as int8 and keeps float arithmetic");
}

Result<SpeedEvidence> measure_speed(OrtProcess& process, const fs::path& reference, const fs::path& candidate, const InputItem& item,
                                    const InputPlan& plan, int threads, int runs, const fs::path& work) {
  const SessionSettings settings = cpu_session_settings(threads);
  struct Side {
    const fs::path* model;
    std::optional<PreparedSession> session;
    std::vector<Tensor> inputs;
    std::vector<double> ms;
  };
  Side sides[2] = {{&reference, {}, {}, {}}, {&candidate, {}, {}, {}}};
  for (auto& s : sides) {
    auto opened = open_session(process, *s.model, settings);
    if (!opened) return Error{opened.error().code, fmt::format("{}: {}", s.model->string(), opened.error().message)};
    auto prepared = prepare_session(std::move(*opened));
    if (!prepared) return prepared.error();
    s.session.emplace(std::move(*prepared));
    auto inputs = calibration_tensors(item, s.session->io, plan);
    if (!inputs) return inputs.error();
    s.inputs = std::move(*inputs);
  }
  using Clock = std::chrono::steady_clock;
  for (int r = -1; r < runs; ++r) {  // run -1 warms both up
    for (auto& s : sides) {
      const auto t0 = Clock::now();
      auto ran = run_session(*s.session, s.inputs);
      if (!ran) return Error{ran.error().code, fmt::format("{}: {}", s.model->string(), ran.error().message)};
      if (r >= 0) s.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
  }
  SpeedEvidence e;
  e.input = item.name;
  e.runs = runs;
  e.f32_runs_ms = sides[0].ms;
  e.quantised_runs_ms = sides[1].ms;
  KernelTimes* out[2] = {&e.f32, &e.quantised};
  for (int i = 0; i < 2; ++i) {
    auto profiled = profile_placement(process, *sides[i].session, *sides[i].model, settings, sides[i].inputs,
                                      work / (i == 0 ? "profile-f32" : "profile-quantised"), 3);
    if (!profiled) return profiled.error();
    *out[i] = split(*profiled, median(sides[i].ms));
  }
  return e;
}

}  // namespace rung
