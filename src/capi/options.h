// The C ABI's options: text keys and values (rung/rung.h lists them) turned into
// the engine core's options, each number through the one checked parser.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "rung/engine_core.h"
#include "rung/result.h"
#include "rung/rung.h"

namespace rung::capi {

class OptionSet {
 public:
  OptionSet();
  // An unknown key, or a value its key cannot take, is kInvalidArgument naming both.
  Status set(const std::string& key, const std::string& value);
  Status add_model(const std::string& name, const std::string& path, const std::string& role);
  void set_progress(rung_progress_fn callback, void* user);
  // Each model's files (f32 and derived) are regular files: else kNotFound (or
  // why not) naming the model and the file.
  Status check_model_files() const;
  // What Engine::start takes: a copy, so the options may be freed once the engine starts.
  // With a variant manifest, its groups are the models (loaded and checked here,
  // each resolved to its variant when the engine starts, as `rung prepare` does).
  Result<core::EngineOptions> engine_options() const;

 private:
  ModelRegistration* model(const std::string& name);
  core::EngineOptions options_;
  std::filesystem::path manifest_;    // variant_manifest
  std::filesystem::path deployment_;  // deployment
  std::map<std::string, std::string> manifest_variables_;  // manifest_variable.NAME: ${NAME} in its paths
  rung_progress_fn callback_ = nullptr;
  void* user_ = nullptr;
};

}  // namespace rung::capi
