// What a command writes, checked against what it reads before any work is
// done: an output never replaces one of its inputs, another output, or a
// directory, and its directory is there to write in. Files are compared by
// device and inode, so a hard link or a symbolic link to an input is that
// input; an input directory stands for every file under it.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "rung/result.h"

namespace rung {

// A path with what it is to the command, for messages: {"--out", "q.onnx"}, {"the model", "m.onnx"}.
struct NamedPath {
  std::string what;
  std::filesystem::path path;
  // An output whose missing directories the command makes (a bench record's):
  // the nearest one that is there must be a directory this user can write in.
  bool parents_made = false;
};

// Whether two paths name the same existing file (device and inode). False when either is missing.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

// Ok, or kInvalidArgument naming the output and the reason, and the other path
// where there is one: "--out m.onnx is the model m.onnx (the same file): it
// would be replaced", "--report r.json and --out r.json name the same file",
// "--out d is a directory", "--out x/q.onnx: the directory x does not exist",
// "--out cal/new.onnx is inside --calibration cal": an output is never
// written into an input directory, new or not, so the next run does not read
// it as an input. Outputs and inputs with an empty path are skipped.
Status check_output_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// A directory a command writes in and makes when missing (a cache, a work
// directory): ok when missing or a directory; kInvalidArgument when it is a
// file (an input, say), or is or is inside one of `inputs`' directories.
Status check_output_directory(const NamedPath& dir, const std::vector<NamedPath>& inputs = {});

}  // namespace rung

namespace rung {

// A command's output document (a JSON report, a CSV table): written under a
// temporary name, fsync'd and renamed over `path`, so a reader never sees half
// of it and an error leaves the old file as it was.
Status write_output_file(const std::filesystem::path& path, std::string_view contents);

// A model a command is given, checked before any work: a regular file this
// process can open to read, else why not, naming it ("PATH: does not exist",
// "PATH: is a directory, not a file", "PATH: cannot be read: Permission denied").
// It is opened without blocking (a FIFO is refused, not waited on) and not read.
Status check_model_file(const std::filesystem::path& path);

}  // namespace rung
