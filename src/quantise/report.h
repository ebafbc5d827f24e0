// The quantise report: the recipe and the evidence in one self-contained JSON
// document (schemas/quantise-report.schema.json), and the same for people.
// Whatever it decides, it says where it was measured: ONNX Runtime's CPU
// running a QDQ graph is not the NPU that will load it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "quantise/activation_fold.h"
#include "quantise/bias_correction.h"
#include "quantise/calibration.h"
#include "quantise/conv_fold.h"
#include "quantise/hazards.h"
#include "quantise/island_search.h"
#include "quantise/input_sets.h"
#include "quantise/proof.h"
#include "rung/hardware.h"
#include "quantise/qdq.h"
#include "quantise/speed.h"
#include "rung/parity.h"

namespace rung {

inline constexpr const char* kScoredOnNote =
    "Scored by ONNX Runtime's CPU execution provider running the QDQ graph on this machine. That is a simulation of the "
    "quantised arithmetic, not a measurement on the accelerator (an NPU) that will load the file: its kernels round and "
    "accumulate differently, and a form is not measured there until it has run there.";

struct QuantiseEvidence {
  std::string created;        // UTC
  std::string command;
  // The source.
  std::filesystem::path source;
  std::string source_sha256;
  std::string source_stable_sha256;  // doc strings ignored (graph/stable_hash.h)
  std::int64_t source_opset = 0;
  std::size_t source_nodes = 0;
  // The preparation: an opset upgrade when the source was below 13,
  // normalisations and per-channel affines folded into convolutions, divisions
  // by constants and hard activations rewritten; proven the same when anything changed.
  std::optional<std::int64_t> upgraded_to;
  ConvFolds conv_folds;
  ActivationFolds activation_folds;
  std::optional<Proof> upgrade_proof;
  // The recipe.
  std::string name;
  QdqSettings qdq;
  Calibrator calibrator;
  std::int64_t opset = 0;
  QdqPlan plan;
  QdqCounts counts;
  // A w8 form's biases, corrected by each node's rounding shift over the calibration inputs.
  std::optional<BiasCorrection> bias_correction;
  std::vector<MixedRangeHazard> hazards;
  // The sets.
  const InputSet* calibration = nullptr;
  const InputSet* holdout = nullptr;
  std::size_t calibration_inputs = 0;
  double calibration_seconds = 0;
  std::uint64_t non_finite_values = 0;
  std::filesystem::path gate_file;
  std::string gate_file_sha256;
  // Where it was scored.
  std::string runtime_version;
  std::filesystem::path runtime_library;
  std::string device;
  std::vector<QuantisedSpeedFeature> cpu_features;  // what decides the form's speed on the CPU that scored it
  std::optional<ParityReport> scored;
  std::optional<SpeedEvidence> speed;
  bool allow_slower = false;  // a slower int8 CPU form was allowed (--allow-slower)
  // --search, when the form as asked failed its gate: what was tried, in order.
  struct SearchStep {
    std::string what;          // "calibrator entropy", "12 worst nodes float"
    std::string calibrator;
    std::size_t float_nodes = 0;
    bool passed = false;
    std::string summary;       // the first gate's
  };
  struct Search {
    std::vector<SearchStep> tried;
    std::vector<NodeError> ranking;  // the nodes adding the most error, worst first
    bool chosen = false;             // a passing form was found
  };
  std::optional<Search> search;  // the form against the f32 file on the CPU that scored it
  // The result.
  std::string decision;  // "written", "refused", "forced"
  std::vector<std::string> failed;
  std::filesystem::path output;  // when written
  std::string output_sha256;     // of the candidate scored (the bytes written when written)
  std::string output_stable_sha256;
  std::uint64_t output_bytes = 0;
  std::string model_id;
  std::string form_evidence;

  std::string to_json() const;
  std::string text() const;

 private:
  nlohmann::json bias_correction_json() const;
};

}  // namespace rung
