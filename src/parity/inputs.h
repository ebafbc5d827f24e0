// The inputs of a parity run, one item at a time: a directory of tensor files
// (.pb, .npy) or of subdirectories of them (one per input set, as the ONNX test
// suites store them), or of images with a declared preprocessing; or seeded
// random input sets. Every item is checked against the model before it runs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rung/image.h"
#include "rung/input_spec.h"
#include "session/model_io.h"

namespace rung {

struct InputItem {
  enum class Kind { kTensors, kImage, kRandom };
  std::string name;                          // as the report names it: the file or directory name, or "random 3"
  Kind kind = Kind::kTensors;
  std::vector<std::filesystem::path> files;  // tensor files, or the one image
  std::size_t index = 0;
};

// The items of a run, each made when it is asked for: random items are never
// held all at once, so --random 4294967295 runs in the memory of one.
class InputItems {
 public:
  static InputItems random(std::size_t count);
  // Sorted by name. Errors: not a directory, empty, or a file that is neither a
  // tensor nor an image.
  static Result<InputItems> listed(const std::filesystem::path& dir);

  std::size_t size() const { return listed_.empty() ? random_ : listed_.size(); }
  InputItem at(std::size_t index) const;
  const InputItem* first_image() const;  // a listed image, if any

 private:
  std::vector<InputItem> listed_;
  std::size_t random_ = 0;
};

struct InputPlan {
  std::optional<ImagePreprocess> preprocess;
  std::string image_input;  // "" = the only 4-axis input not given otherwise
  InputSpec spec;           // dims for random inputs, values for inputs no file gives
  std::uint64_t seed = 0;
};

// One value per model input, checked against the model (type, rank, fixed
// dimensions; a sequence or optional where the model takes one). An optional
// input no file gives is None.
Result<std::vector<Value>> make_item_values(const InputItem& item, const ModelIo& io, const InputPlan& plan);

}  // namespace rung
