// A bench record that --json appends to: merged with a new record, and a new
// record (the fuzzed text) merged into a valid one.
#include <cstddef>
#include <cstdint>
#include <string>

#include "rung/bench_record.h"

namespace {
const std::string kRecord = R"({"schema": "rung-bench-record", "schema_version": 1,
  "model": {"name": "m", "file": "m.onnx", "sha256": "0000000000000000000000000000000000000000000000000000000000000000"},
  "measurements": [{"rows": []}]})";
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)rung::merge_bench_records(text, kRecord);
  (void)rung::merge_bench_records(kRecord, text);
  return 0;
}
