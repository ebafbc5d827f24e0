// An input spec (--input-spec, a gate file's "inputs"), checked against a model
// and used to make its inputs, as the probe and bench workers and parity do.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "rung/input_spec.h"
#include "session/inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto spec = rung::InputSpec::from_json_text(std::string(reinterpret_cast<const char*>(data), size));
  if (!spec) return 0;
  (void)spec->canonical();
  spec->tensors_dir.clear();                                       // no file reads
  spec->max_tensor_bytes = std::min<std::uint64_t>(spec->max_tensor_bytes, 1 << 20);  // fast runs
  rung::ModelIo io;
  io.inputs = {{"x", rung::ElementType::kFloat, {-1, 3, -1, -1}, {"batch", "", "height", "width"}},
               {"sr", rung::ElementType::kInt64, {}, {}},
               {"state", rung::ElementType::kFloat16, {2, -1, 128}, {"", "n", ""}},
               {"mask", rung::ElementType::kBool, {-1}, {"len"}},
               {"ids", rung::ElementType::kInt8, {-1}, {""}}};
  (void)rung::make_inputs(io, *spec, 7);
  return 0;
}
