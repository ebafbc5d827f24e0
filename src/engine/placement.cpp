#include "engine/placement.h"

#include <fmt/format.h>

#include <algorithm>

#include "rungs/forms.h"

namespace rung {
namespace {

Placement on_cpu(const ModelRegistration& m, const PlacementSnapshot& s, const RungSpec& cpu, std::string reason) {
  Placement p{cpu, NumericForm::kF32, m.f32, false, std::move(reason)};
  // A variant for the CPU in a quantised form: its file, whose graph the CPU's optimised form is built from too.
  if (const DerivedForm* q = quantised_form_for(cpu, m)) {
    p.form = q->form;
    p.file = q->path;
    p.reason += fmt::format(", its variant's {} form", numeric_form_name(q->form));
  }
  if (auto it = s.cpu_forms.find(m.name); it != s.cpu_forms.end()) {
    p.file = it->second;
    p.reason += " (optimised graph from the cache)";
  }
  return p;
}

// Whether the model's files are for this rung (a resolved variant names its rungs; the CPU serves every model).
bool serves(const ModelRegistration& m, const RungSpec& rung) {
  return m.rungs.empty() || rung.append == AppendMethod::kNone || std::find(m.rungs.begin(), m.rungs.end(), rung.name) != m.rungs.end();
}

}  // namespace

std::vector<Placement> placements(const ModelRegistration& m, const PlacementSnapshot& s) {
  std::vector<Placement> out;
  const RungSpec& cpu = s.below.empty() ? s.chosen : s.below.back();
  const RungSpec& rung = s.chosen;
  std::string demoted;

  // Last, the CPU; and where it runs the variant's quantised form, the f32 file
  // after it, which the CPU always runs, should that form fail to open.
  auto end_on_cpu = [&](std::string reason) {
    out.push_back(on_cpu(m, s, cpu, std::move(reason)));
    if (out.back().form != NumericForm::kF32) {
      out.push_back({cpu, NumericForm::kF32, m.f32, false, fmt::format("the f32 file, below its variant's {} form", numeric_form_name(out.back().form))});
    }
    return out;
  };
  if (rung.append == AppendMethod::kNone) return end_on_cpu("the chosen rung");
  if (!serves(m, rung)) {
    demoted = fmt::format("is not a rung of its variant ({})", fmt::join(m.rungs, ", "));
  } else if (m.role == Role::kEmbedder && rung.form == ModelForm::kQuantized) {
    // Embeddings from every device must compare: never a quantised embedder.
    out.push_back(on_cpu(m, s, cpu, fmt::format("embedder pinned to f32: {} runs quantised forms", rung.display)));
    return out;
  } else if (rung.form == ModelForm::kQuantized) {
    const DerivedForm* q = quantised_form_for(rung, m);
    if (q == nullptr) {
      demoted = fmt::format("no quantised form for {}", rung.display);
    } else if (!rung.compiles_engines || s.engines.count(m.name)) {
      auto file = rung.compiles_engines ? s.engines.at(m.name) : q->path;
      out.push_back({rung, q->form, file, false, "the chosen rung, quantised form"});
    } else {
      demoted = s.engine_failures.count(m.name) ? "engine failed: " + s.engine_failures.at(m.name) : "engine not built yet";
    }
  } else if (rung.compiles_engines) {
    if (auto it = s.engines.find(m.name); it != s.engines.end()) {
      bool fp16 = builds_fp16(rung, m.role);
      std::string reason = m.role == Role::kEmbedder && rung.form == ModelForm::kF32ToF16Engine
                               ? "the chosen rung's engine, built f32 for an embedder"
                               : "the chosen rung's engine";
      if (auto rw = s.engine_rewrites.find(m.name); rw != s.engine_rewrites.end()) {
        reason += fmt::format(", built from a rewritten graph ({})", rw->second);
      }
      if (auto rp = s.engine_replaced.find(m.name); rp != s.engine_replaced.end()) reason += fmt::format(", rebuilt ({})", rp->second);
      out.push_back({rung, fp16 ? NumericForm::kF16 : NumericForm::kF32, it->second, false, reason});
    } else {
      demoted = s.engine_failures.count(m.name) ? "engine failed: " + s.engine_failures.at(m.name) : "engine not built yet";
    }
  } else {
    out.push_back({rung, NumericForm::kF32, m.f32, false, "the chosen rung"});
  }

  // The rungs below: non-compiling ones serve the f32 file directly (CUDA under TensorRT).
  for (const auto& below : s.below) {
    if (below.append == AppendMethod::kNone) break;
    if (below.compiles_engines || below.form != ModelForm::kF32 || !serves(m, below)) continue;
    out.push_back({below, NumericForm::kF32, m.f32, false,
                   demoted.empty() ? fmt::format("below {}", rung.display) : fmt::format("{} {}", rung.display, demoted)});
  }
  return end_on_cpu(demoted.empty() ? fmt::format("below {}", rung.display) : fmt::format("{} {}", rung.display, demoted));
}

}  // namespace rung
