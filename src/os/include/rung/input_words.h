// One wording per failure class of an input a command or the engine is given,
// whatever reads it: not there, there but the wrong kind of file, there but not
// what it was given as. The cross-command tests (MissingInputCliTest,
// WrongKindInputCliTest, MalformedInputCliTest) hold every input to them; the
// command line's own checks of its arguments use them too.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "rung/result.h"

namespace rung {

// The one wording, in every command and the C ABI, of an input that is not there:
// "PATH: does not exist" (kNotFound). A caller may put what the path was given as
// before it ("--gate: PATH: does not exist"), never other words for the same thing.
// `shown` replaces the path's text where the path is shown with what it is
// ("plugin library PATH", "the runtime directory=PATH").
Error missing_path(const std::filesystem::path& path, std::string_view shown = {});

// The one wording of an input that is there but is the wrong kind of file:
// "PATH: is a FIFO, not a file", "PATH: is a regular file, not a directory"
// (kInvalidArgument). `kind` is os/regular_file.h's file_kind() words, or a system's own ("a named pipe").
enum class WantedKind { kFile, kDirectory };
Error wrong_kind(std::string_view shown, std::string_view kind, WantedKind wanted);
Error wrong_kind(const std::filesystem::path& path, std::filesystem::file_type type, WantedKind wanted, std::string_view shown = {});

// The one wording of an input that is there and readable but is not what it was
// given as: "PATH: not valid JSON: line 2, column 3: ...", "PATH: not an ONNX
// model: protobuf parsing failed", "PATH: not a rung bench record: ..." (kInvalidArgument).
Error malformed_input(std::string_view shown, std::string_view what, std::string_view why = {});

// Ok when `dir` (after symbolic links) is a directory; else missing_path(dir), or
// wrong_kind naming what it is instead.
Status check_input_directory(const std::filesystem::path& dir, std::string_view shown = {});

// Ok when `path` (after symbolic links) is a regular file; else missing_path, or
// wrong_kind naming what it is instead ("/dev/zero: is a character device, not a file").
Status check_regular_file(const std::filesystem::path& path, std::string_view shown = {});

}  // namespace rung
