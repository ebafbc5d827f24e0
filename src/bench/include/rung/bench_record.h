// The bench record: one JSON file per model (schemas/bench-record.schema.json),
// holding the model once and a `measurements` array with one entry per device
// and run. A record from another device is appended, never overwritten: records
// are the unit the release registry holds.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "rung/bench.h"
#include "rung/result.h"

namespace rung {

inline constexpr const char* kBenchRecordSchema = "rung-bench-record";
// Version 2 added the model's stable hash. A record of another version is
// neither appended to nor rewritten; the registry reads versions 1 and 2.
inline constexpr int kBenchRecordSchemaVersion = 2;

// A new record of one model holding this run's measurement. `command` is the
// command line as typed (provenance).
std::string bench_record_json(const BenchReport& report, const BenchModelReport& model, const std::string& command);

// What `rung bench --json` prints: one document (schemas/bench-records.schema.json),
// {"schema": "rung-bench-records", "schema_version": 1, "records": [every model's new record]}.
std::string bench_records_json(const BenchReport& report, const std::string& command);

// One row per model × form × rung, RFC 4180 (CRLF line ends, quoted where needed),
// a header line first: model, form, file, rung, rung_display, provider, build (ONNX
// Runtime version), model_id, ok, build_cold_ms, build_cached_ms, first_ms, p50_ms,
// p90_ms, p99_ms, cv, x_floor, x_floor_low, x_floor_high, x_f32, x_f32_low,
// x_f32_high, placed_nodes, total_nodes, placed_time_share, verdict, reason.
std::string bench_csv(const BenchReport& report);

// `existing` with `addition`'s measurements appended. Refused (existing left
// alone) when either is not a record of this schema version, or they are
// records of different model files (SHA-256).
Result<std::string> merge_bench_records(const std::string& existing, const std::string& addition);

// Where each model's record goes. One model: `target` itself, or
// `target/<name>.json` when `target` is a directory. Several: `target` is a
// directory (created when missing) and each record is `<name>.json` in it.
Result<std::vector<std::filesystem::path>> bench_record_paths(const std::filesystem::path& target,
                                                              const std::vector<std::string>& model_names);

// Whether a record of `model` can be written at `file`: absent, or a record of
// the same model file (SHA-256) to append to. Checked before anything is measured.
Status check_bench_record_target(const std::filesystem::path& file, const std::filesystem::path& model);

// Writes (or appends to) every model's record. Every merge is done first and
// every file is written atomically, so an error leaves no file half-written and
// no existing record changed by a refused merge.
Status write_bench_records(const BenchReport& report, const std::vector<std::filesystem::path>& files, const std::string& command);

}  // namespace rung
