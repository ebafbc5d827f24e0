// Shared libraries as this operating system names and checks them, in one
// place: the ladder, the runtime search, the plugin scan and the provider
// options say a library's stem ("onnxruntime_providers_cuda") and never a
// suffix, so a port names its own files here ("lib<stem>.so" on Linux,
// "<stem>.dll" on Windows) and checks its own format (ELF here, PE there).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace rung {

// The file a library of this stem is: "QnnHtp" -> "libQnnHtp.so".
std::string library_file_name(std::string_view stem);
// A program's file name from its name: "rung-probe-worker", "rung-probe-worker.exe".
std::string program_file_name(std::string_view name);
// Whether a file name is a library's, a versioned one included ("libx.so", "libx.so.1.30.0").
bool is_library_file_name(std::string_view file_name);
// Whether a file name is this stem's library, versioned or not: ("libonnxruntime.so.1", "onnxruntime").
bool is_library_file_of(std::string_view file_name, std::string_view stem);
// A library file's stem: "librung_sim_ep.so" -> "rung_sim_ep"; the name itself when it is no library's.
std::string library_stem(std::string_view file_name);
// A library file name split at the system's suffix, its prefix kept: "libcudart.so.13" ->
// {"libcudart", "13"}, "libfoo.so" -> {"libfoo", ""}; nullopt when it is no library's.
struct LibraryFileName {
  std::string_view base;
  std::string_view version;
};
std::optional<LibraryFileName> split_library_file_name(std::string_view file_name);

// Read from the file before the loader maps it: empty when it is a library this
// process can load as far as its headers tell (this machine's architecture, its
// headers and segments inside the file); otherwise why not. The loader maps
// segments by the sizes the headers claim, so a truncated file would fault
// inside it (SIGBUS) instead of failing; and a library for another machine is
// said as such, not as the loader's "wrong ELF class" or "invalid header".
// A file too short or not in the system's format is left to the loader to name.
std::string library_file_problem(const std::filesystem::path& file);

// Whether the library exports this symbol, read from the file's own table
// (nothing of it is loaded or run): how a plugin EP library is told from others.
bool library_exports_symbol(const std::filesystem::path& file, std::string_view symbol);

}  // namespace rung
