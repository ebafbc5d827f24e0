// What `rung registry add --bench/--parity` and `registry import` read: a bench
// record and a parity report offered as a release's evidence, a record's
// measurement rows, and the precision counts and the mark of a failed gate kept
// in the database, through the registry's own readers (registry/records.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "registry/records.h"
#include "rung/registry.h"

namespace {

// A release the documents could be evidence for: the sha256 the seeds name.
rung::Release target() {
  rung::Release r;
  r.model = "m";
  r.version = "1";
  r.target = {"x86_64 CPU", "cpu"};
  r.artifact.sha256 = std::string(64, '0');
  r.environment.runtime_version = "1.30.0";
  r.environment.device = "linux; cpu Test CPU 9000";
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const rung::Release release = target();
  const rung::EvidenceFile file{"evidence.json", std::string(reinterpret_cast<const char*>(data), size)};
  (void)rung::registry::check_bench_record(release, file);
  (void)rung::registry::check_parity_report(release, file);
  (void)rung::registry::measurement_rows(file.text, "record");
  (void)rung::registry::precision_from_columns("initializers", file.text);
  (void)rung::registry::gate_failed_from_column(file.text, false);
  return 0;
}
