// Every command that writes files calls this before any work, with everything
// it writes and everything it reads: an output that is one of its inputs (the
// same file, links included), another output, a directory, a file in a
// directory that is not there, or a file inside one of its input directories
// or inside rung's own state (the cache, the data directory holding the
// registry) is a usage error (exit 2) naming both paths (rung/output_paths.h).
// A new command that writes adds itself here.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "rung/output_paths.h"

namespace rung::cli {

// rung's own state, which no output may replace or be written into: the cache
// in effect (the probe's decision and the engines: `cache_dir` when the
// command names one, else RUNG_CACHE_DIR or the user's) and the user's data
// directory (the default registry). A part that cannot be found is left out.
std::vector<NamedPath> rung_state(const std::filesystem::path& cache_dir = {});

// Throws CliError (usage) when an output would replace an input or rung's
// state, land in an input directory, or cannot be written. `cache_dir`: the
// command's --cache-dir, when it takes one.
void check_outputs_before_work(const std::vector<NamedPath>& outputs, std::vector<NamedPath> inputs, const std::filesystem::path& cache_dir = {});

// Throws CliError (usage) when a directory the command writes in (a cache, a
// kept work directory) is a file, or is or is inside one of `inputs`.
void check_output_directory_before_work(const NamedPath& dir, const std::vector<NamedPath>& inputs = {});

// "NAME=FILE" or "FILE": the file.
std::string file_of_assignment(const std::string& arg);

}  // namespace rung::cli
