// Reading files: the one way in for every file rung reads that it did not
// write in this process (tools/check-inputs.py keeps it so). Each file is read
// as one kind, and each kind has its size limit; only regular files are read,
// and a FIFO or a device is refused without being waited on.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "os/opened_file.h"
#include "rung/result.h"

namespace rung {

// What a file is, for its size limit.
enum class FileKind {
  kDocument,       // JSON: manifests, deployments, gate files, specs, records, recipes, caches, job and result files
  kModel,          // an ONNX model (the graph file; ONNX Runtime reads external data itself)
  kTensor,         // a recorded .pb or .npy tensor
  kImage,          // a PNG, JPEG or BMP file
  kCharacterList,  // a CTC decoder's symbols, one a line
  kText,           // a log or a progress file
};

struct FileKindLimit {
  FileKind kind;
  const char* name;        // "a document", for messages: "rung reads at most 16.0 MiB for a document"
  std::uint64_t max_bytes;  // the default limit
  bool raised_by_tensor_limit;  // the tensor limit raises it (Setting::kMaxTensorMb); else it is fixed
};

// A tensor file's limit for a tensor limit (--max-tensor-mb): the data plus room for its name and dimensions.
inline constexpr std::uint64_t kTensorHeaderRoom = 64u << 10;
constexpr std::uint64_t tensor_file_limit(std::uint64_t max_tensor_bytes) {
  return max_tensor_bytes > UINT64_MAX - kTensorHeaderRoom ? UINT64_MAX : max_tensor_bytes + kTensorHeaderRoom;
}

// The table of kinds and limits (the README's "Files from outside" lists it).
inline constexpr FileKindLimit kFileKinds[] = {
    // 16 MiB: rung's own documents are kilobytes, a bench record grows by about 1 KiB a run,
    // and nlohmann's tree of 16 MiB of small numbers stays near 130 MiB.
    {FileKind::kDocument, "a document", 16ull << 20, false},
    // Protobuf's ceiling for one message: a larger graph file cannot be parsed at all.
    {FileKind::kModel, "a model", (2ull << 30) - 1, false},
    // The tensor limit (kDefaultMaxTensorBytes) plus room for a name and dimensions.
    {FileKind::kTensor, "a tensor file", tensor_file_limit(1ull << 30), true},
    // An encoded image is never larger than the pixels the tensor limit allows.
    {FileKind::kImage, "an image", 1ull << 30, true},
    // Every assigned Unicode character, one a line, is under 1 MiB.
    {FileKind::kCharacterList, "a character list", 4ull << 20, false},
    {FileKind::kText, "a text file", 16ull << 20, false},
};

const FileKindLimit& file_kind_limit(FileKind kind);

// The whole of a regular file of this kind, or why not ("is a FIFO, not a
// file", "is 200.0 MiB; rung reads at most 16.0 MiB for a document"): errors
// name the file. kNotFound when it does not exist.
Result<std::string> read_input_file(const std::filesystem::path& path, FileKind kind);
// The same with the limit a command set (tensors and images: --max-tensor-mb).
Result<std::string> read_input_file(const std::filesystem::path& path, FileKind kind, std::uint64_t max_bytes);
// For files rung itself wrote earlier (a worker's result, a failure record):
// their content, or nothing when absent, damaged in kind, or too big.
std::optional<std::string> read_input_file_if_usable(const std::filesystem::path& path, FileKind kind);
// At most the last `max_bytes` of a regular file (a worker's log, for its last
// line); empty when it cannot be read.
std::string read_file_tail(const std::filesystem::path& path, std::uint64_t max_bytes);

// A regular file of this kind, open for a reader that streams it (a model is
// parsed from the descriptor, not copied whole first) or reads a header before
// deciding what else to read (.npy); closed with this object.
class InputFile {
 public:
  std::uint64_t size() const { return file_.size(); }
  // At most `length` bytes from `offset` (fewer at the end of the file).
  Result<std::string> read(std::uint64_t offset, std::uint64_t length) const;
  // The same into a buffer of the caller's (a parser's stream): how many bytes, 0 at the end.
  Result<std::size_t> read_into(void* into, std::size_t length, std::uint64_t offset) const { return file_.read_at(into, length, offset); }

 private:
  friend Result<InputFile> open_input_file(const std::filesystem::path&, FileKind, std::uint64_t);
  explicit InputFile(OpenedFile file) : file_(std::move(file)) {}
  OpenedFile file_;
};
Result<InputFile> open_input_file(const std::filesystem::path& path, FileKind kind);
// The same with the limit a command set; a reader that bounds what it reads by
// a header it checks first (.npy: the shape against the tensor limit) gives UINT64_MAX.
Result<InputFile> open_input_file(const std::filesystem::path& path, FileKind kind, std::uint64_t max_bytes);

// The documented exception: small pseudo-files of the kernel (sysfs, procfs,
// /proc/self/cmdline) and the fixture trees that stand in for them. Their
// stated size is 0 or 4096 whatever they hold, so they are read to their end,
// at most `max_bytes`; only regular files (no FIFO, no device). Nothing when
// the file is missing or cannot be read: a hardware fact is then absent.
inline constexpr std::uint64_t kMaxSystemFileBytes = 16ull << 20;  // /proc/cpuinfo on a very large host stays far below
std::optional<std::string> read_system_file(const std::filesystem::path& path, std::uint64_t max_bytes = kMaxSystemFileBytes);

// The primitive under read_input_file. The whole of a regular file of at most `max_bytes`, or why not, in words that
// say what the path is: "does not exist", "is a directory, not a file", "is a
// FIFO, not a file", "cannot be read: Permission denied", "is 3.0 GiB; rung
// reads at most 64.0 MiB here". A FIFO or device is never opened for reading,
// so it cannot block. `limit_option` names what raises the limit, for the message.
Result<std::string> read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view limit_option = {});

// "is a directory", "is a FIFO", ... for a path that exists but is not a regular file; "" otherwise.
std::string non_regular_kind(const std::filesystem::path& path);

// 1536 -> "1.5 KiB", 3221225472 -> "3.0 GiB".
std::string byte_size_text(std::uint64_t bytes);

}  // namespace rung
