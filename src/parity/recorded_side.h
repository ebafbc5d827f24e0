// A parity side recorded for comparing elsewhere: `rung parity --record DIR` runs the
// ref side alone and stores, per input set, the inputs it was given and the outputs it
// gave (DIR/SET/input_K.pb, DIR/SET/output_K.pb: an ONNX test folder's layout), with
// DIR/side.json saying what ran where. On another machine (x86-64 against a recording
// made on ARM, under emulation or on a device), `--ref expected:DIR --inputs DIR` or
// `--cand expected:DIR` compares against it with the same gates.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rung/parity.h"
#include "rung/result.h"

namespace rung {

inline constexpr const char* kRecordingFile = "side.json";

Status write_recorded_side(const std::filesystem::path& dir, const ParityRecording& side);
// DIR/side.json when there is one (a folder of stored outputs without it, an ONNX
// test folder, is read as before); an unreadable or malformed one is an error naming it.
Result<std::optional<ParityRecording>> read_recorded_side(const std::filesystem::path& dir);

}  // namespace rung
