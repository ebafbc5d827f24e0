// What passes between rung and its workers: job.json and result.json of every
// job kind, and the parity protocol's lines both ways (jobs/parity_protocol.h).
// Each is read with the bounded parser, then into its struct; a wrong shape is
// a json::exception the worker and the parent turn into a "malformed" answer.
#include <cstddef>
#include <cstdint>
#include <string>

#include "jobs/benchmark.h"
#include "jobs/compile.h"
#include "jobs/measure.h"
#include "jobs/parity_protocol.h"
#include "os/json_input.h"

namespace {

template <class T>
void read_as(const nlohmann::json& j) {
  try {
    (void)j.get<T>();
  } catch (const nlohmann::json::exception&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto j = rung::parse_json(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!j) return 0;
  read_as<rung::ProbeJob>(*j);
  read_as<rung::ProbeJobResult>(*j);
  read_as<rung::BenchJob>(*j);
  read_as<rung::BenchJobResult>(*j);
  read_as<rung::CompileJob>(*j);
  read_as<rung::CompileResult>(*j);
  read_as<rung::ParityJob>(*j);
  read_as<rung::ModelIo>(*j);
  (void)rung::json_string_or(*j, "error", "");
  (void)j->dump();  // what the parent does with a result it keeps
  return 0;
}
