/* rung's C ABI: the engine an application embeds, for any language.
 *
 * Stable: every declaration here. RUNG_ABI_VERSION only grows; a function or
 * an enum value, once published, keeps its meaning; a struct grows only at its
 * end, and the caller states the size it was compiled with (struct_size), so
 * an older caller keeps working against a newer library. Everything else rung
 * installs (the C++ headers beside this one but engine.h) is C++ internals and
 * may change in any release.
 *
 * Conventions:
 *  - Handles are opaque. Whoever is handed one frees it with the matching _free;
 *    every _free accepts NULL.
 *  - A call that can fail returns a rung_status*: NULL on success, else a
 *    status the caller frees with rung_status_free. Out-parameters are written
 *    only on success.
 *  - Strings are UTF-8 and NUL-terminated; paths are UTF-8. A char* a function
 *    returns is the caller's (rung_string_free); a const char* stays the
 *    handle's and lives as long as it does.
 *  - No global state beyond what the handles own; the engine never changes the
 *    process environment, and reads none of it unless asked (`environment`).
 *  - Thread-safety is stated per function ("any thread": callable concurrently
 *    on one handle; "one thread at a time": the caller serialises).
 */
#ifndef RUNG_RUNG_H
#define RUNG_RUNG_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#if defined(RUNG_BUILDING_ABI)
#define RUNG_API __declspec(dllexport)
#else
#define RUNG_API __declspec(dllimport)
#endif
#else
#define RUNG_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Version 1: options, engine, job, session, value, status.
 * Version 2: ONNX Runtime's own handles per session (rung_session_ort_*).
 * Version 3: the whole decision as one document (rung_engine_decision_json). */
#define RUNG_ABI_VERSION 3

/* The ABI version of the loaded library: compare with RUNG_ABI_VERSION (it is
 * at least as large when the library is as new as the header). Any thread. */
RUNG_API int32_t rung_abi_version(void);
/* "0.1.0": the release of the loaded library; static storage. Any thread. */
RUNG_API const char* rung_version_string(void);

/* ---- Status ---------------------------------------------------------------- */

typedef struct rung_status rung_status;

/* What kind of failure; each maps to the command line's exit code (below). */
typedef enum rung_error_code {
  RUNG_OK = 0,
  RUNG_INVALID_ARGUMENT = 1, /* the caller passed something unusable (exit 2) */
  RUNG_NOT_FOUND = 2,        /* a file, directory or name that is not there (exit 2) */
  RUNG_PERMISSION = 3,       /* refused for safety, e.g. a library others can write to (exit 1) */
  RUNG_LOAD_FAILED = 4,      /* a library failed to load (exit 1) */
  RUNG_UNSUPPORTED = 5,      /* the runtime or platform cannot do it (exit 1) */
  RUNG_RUNTIME = 6,          /* ONNX Runtime returned an error (exit 1) */
  RUNG_IO = 7,               /* reading or writing a file failed (exit 1) */
  RUNG_NO_RUNTIME = 8,       /* no usable ONNX Runtime build (exit 3) */
  RUNG_ERROR_CODE_MAX_ = 0x7fffffff /* keeps the enum 32 bits wide; not a code */
} rung_error_code;

/* A NULL status reads as RUNG_OK, "" and exit code 0. Any thread. */
RUNG_API rung_error_code rung_status_code(const rung_status* status);
RUNG_API const char* rung_status_message(const rung_status* status);
/* The exit code `rung` gives for this failure: 2 bad input, 3 no runtime, 1 otherwise. */
RUNG_API int32_t rung_status_exit_code(const rung_status* status);
RUNG_API void rung_status_free(rung_status* status);

/* Frees a char* any rung_ function returned. */
RUNG_API void rung_string_free(char* text);

/* ---- Options --------------------------------------------------------------- */

typedef struct rung_options rung_options;

/* One thread at a time, until handed to rung_engine_start (which copies it). */
RUNG_API rung_status* rung_options_create(rung_options** out);
RUNG_API void rung_options_free(rung_options* options);

/* Sets one option from text; an unknown key, or a value its key cannot take,
 * is an error naming both. Keys:
 *   cache_dir                  the probe's cache and the engine cache (required)
 *   plugin_dir                 a directory of plugin execution providers; each call adds one
 *   runtime_dir                where to look first for an ONNX Runtime build
 *   runtime_default_locations  "true"/"false": also search the kit librung_engine was loaded
 *                              from: runtimes/ beside it, then the kit's share/rung/runtimes
 *                              (default true); never beside the application's executable
 *   environment                "true"/"false": read rung's variables (RUNG_ORT_DIR, RUNG_FORCE_RUNG,
 *                              RUNG_PROBE_WORKER, RUNG_SOFTWARE_GPU, RUNG_SOFTWARE_GPU_DIR) (default
 *                              false: the engine is hermetic). RUNG_PLUGIN_DIR is never read: a
 *                              plugin's rung runs in the application's own process
 *   runtime_environment        the same switch as environment, by its first name
 *   worker                     the rung-probe-worker executable (default: RUNG_PROBE_WORKER when
 *                              environment is true, then beside librung_engine, then the kit's
 *                              libexec/rung/ reached from the library's directory; never beside
 *                              the application's executable)
 *   isolate                    "true"/"false": probe and engine builds in child processes (default
 *                              true). With isolation on and no worker found, rung_engine_start
 *                              fails with RUNG_NOT_FOUND naming every place looked at; the probe
 *                              runs in this process only when isolate is "false"
 *   forced_rung                a rung id ("cpu", "rung_sim_ep") the probe must take: one no higher
 *                              than it would choose (a higher one is the probe's error, on the about line)
 *   inference_threads          0 (the fast cores of a big.LITTLE CPU, else physical cores minus two)
 *                              or a count up to the machine's limit
 *   probe_runs                 timed runs per model and rung, 1 to 1000 (default 3)
 *   acceptance_ratio           how much slower than the floor a faithful rung may be, 0.01 to 10000 (default 1)
 *   probe_deadline_ms          per probe, 1 to 86400000 (default 180000)
 *   build_deadline_ms          per engine build, 1 to 86400000 (default 1800000)
 *   worker_memory_mb           the most data a worker may hold, 0 (no limit) to 16777216; default half
 *                              the machine's memory, at least 2048: a provider that allocates without
 *                              end ends its worker, which says so ("ran out of memory")
 *   hardware_root              the file system root the hardware is read from (default "/")
 *   tensorrt_workspace_mb      TensorRT's workspace, 1 to 1048576 (default 512)
 *   variant_manifest           a variant manifest file (version 3): its groups are the models, each
 *                              resolved at start to the variant this device takes, as `rung prepare`
 *                              does; not combined with rung_options_add_model
 *   deployment                 the rungs the application provisions (a deployment file; without
 *                              one, every rung the device offers)
 *   manifest_variable.NAME     what ${NAME} stands for in the manifest's paths
 * and per model (after rung_options_add_model):
 *   model.NAME.input_spec      a JSON input spec file: how the probe feeds the model
 *   model.NAME.form.i8         a derived file: forms i8, f16, a16w8, a16w16, w8
 * One thread at a time. */
RUNG_API rung_status* rung_options_set(rung_options* options, const char* key, const char* value);

/* Registers a model: a unique name, its canonical f32 file, and its role:
 * "detector", "embedder" (always runs f32), "segmenter" or "generic". A name
 * is 1 to 64 characters of A-Z a-z 0-9 _ . -, the first a letter or a digit
 * (it becomes part of file names in cache_dir); another is RUNG_INVALID_ARGUMENT.
 * Every text handed to any rung_ function must be UTF-8, or the call is
 * RUNG_INVALID_ARGUMENT naming the argument (tensor strings excepted: data).
 * One thread at a time. */
RUNG_API rung_status* rung_options_add_model(rung_options* options, const char* name, const char* path,
                                             const char* role);

/* What the progress callback is told. struct_size: sizeof this struct as the
 * library filled it; read a member only when struct_size covers it. */
typedef struct rung_progress {
  size_t struct_size;
  size_t total;        /* engines the chosen rung needs */
  size_t landed;       /* built or found in the cache so far */
  const char* building; /* the model being built now, "" when idle */
  const char* line;    /* "Preparing engines · 3 of 6", failures named; "" when done and clean */
  int32_t done;        /* 1 once every engine has landed or failed */
} rung_progress;

/* Called on the engine's background thread (never the caller's), each time
 * the progress changes; the pointers live only during the call. It must
 * return quickly and must not free the engine. Replaces any earlier callback.
 * One thread at a time. */
typedef void (*rung_progress_fn)(void* user, const rung_progress* progress);
RUNG_API rung_status* rung_options_set_progress(rung_options* options, rung_progress_fn callback, void* user);

/* ---- Engine ---------------------------------------------------------------- */

typedef struct rung_engine rung_engine;

/* Finds and loads the runtime build, starts the probe in the background and
 * returns without waiting for it. Any thread; `options` may be freed after. */
RUNG_API rung_status* rung_engine_start(const rung_options* options, rung_engine** out);
/* Stops the background work and frees the engine, within a second whatever
 * the probe or an engine build is doing: their workers (and what those
 * started) are killed, and nothing half-decided is cached. Work running in
 * this process (isolate "false") cannot be interrupted: it is left to end by
 * itself and calls nothing back. Free its jobs first. Not from the progress
 * callback. */
RUNG_API void rung_engine_free(rung_engine* engine);

/* These are callable from any thread; each returned char* is the caller's. */
/* "CPU · ONNX Runtime 1.30.0 · probing", then the probe's own line. */
RUNG_API char* rung_engine_about_line(const rung_engine* engine);
/* The rung id jobs open on now: "cpu" until the probe reports. */
RUNG_API char* rung_engine_chosen_rung(const rung_engine* engine);
RUNG_API char* rung_engine_chosen_reason(const rung_engine* engine);
/* The progress line as the callback gets it. */
RUNG_API char* rung_engine_progress_line(const rung_engine* engine);
/* Version 3. The whole decision as one JSON document, stable in its schema
 * (schemas/engine-decision.schema.json; docs/abi.md, "The decision document"):
 * the state ("probing", "decided", "probe failed"), the about line, the chosen
 * rung and why, every rung the probe tried with its verdict, reason, build and
 * median times, ratio and interval, placed share and faithfulness figures, and
 * per model what serves it now (rung, form, model id, why) and its engine's
 * state. Bytes that are not UTF-8 in any text are replaced, never refused. */
RUNG_API char* rung_engine_decision_json(const rung_engine* engine);
RUNG_API int32_t rung_engine_probe_done(const rung_engine* engine);
/* Waits until the probe has reported and every engine has landed or failed:
 * 1 when settled, 0 when timeout_ms passed first; 0 does not wait; a negative
 * timeout, or one too long for the clock (INT64_MAX), waits as long as it takes. */
RUNG_API int32_t rung_engine_wait_until_settled(const rung_engine* engine, int64_t timeout_ms);

/* ---- Job ------------------------------------------------------------------- */

typedef struct rung_job rung_job;

/* A unit of work: every session it opens stays on the rung and form the
 * engines had landed when it opened. Any thread. */
RUNG_API rung_status* rung_engine_open_job(rung_engine* engine, rung_job** out);
/* Frees the job and its sessions. */
RUNG_API void rung_job_free(rung_job* job);
/* The rung this job was pinned to; the job's. Any thread. */
RUNG_API const char* rung_job_rung(const rung_job* job);
/* {"model name": "model id", ...} of every session opened so far: a job's
 * results carry these. The caller's. Any thread. */
RUNG_API char* rung_job_model_ids_json(const rung_job* job);

/* ---- Session --------------------------------------------------------------- */

typedef struct rung_session rung_session;

/* The registered model's session in this job, opened on first use (the rung
 * below serves when a rung fails to open it). The session is the job's: it
 * lives until rung_job_free. Any thread. */
RUNG_API rung_status* rung_job_session(rung_job* job, const char* model_name, rung_session** out);

/* The session's; any thread. */
RUNG_API const char* rung_session_model_name(const rung_session* session);
RUNG_API const char* rung_session_model_id(const rung_session* session);  /* "ppocr_cls", "ppocr_det_v4_i8" */
RUNG_API const char* rung_session_rung(const rung_session* session);      /* rung id: "cpu", "rung_sim_ep" */
RUNG_API const char* rung_session_placement_reason(const rung_session* session);

/* Element types: ONNX's TensorProto numbers. */
typedef enum rung_element_type {
  RUNG_FLOAT32 = 1, RUNG_UINT8 = 2, RUNG_INT8 = 3, RUNG_UINT16 = 4, RUNG_INT16 = 5,
  RUNG_INT32 = 6, RUNG_INT64 = 7, RUNG_STRING = 8, RUNG_BOOL = 9, RUNG_FLOAT16 = 10,
  RUNG_FLOAT64 = 11, RUNG_UINT32 = 12, RUNG_UINT64 = 13, RUNG_BFLOAT16 = 16,
  RUNG_FLOAT8E4M3FN = 17, RUNG_FLOAT8E4M3FNUZ = 18, RUNG_FLOAT8E5M2 = 19, RUNG_FLOAT8E5M2FNUZ = 20,
  RUNG_ELEMENT_TYPE_MAX_ = 0x7fffffff /* keeps the enum 32 bits wide; not a type */
} rung_element_type;
/* "float32", "int64", ...; "unknown" for a number not above. Static storage. */
RUNG_API const char* rung_element_type_name(rung_element_type type);

/* One input or output as the model declares it. Filled by rung_session_io;
 * its pointers are the session's. Set struct_size before the call. */
typedef struct rung_io_info {
  size_t struct_size;
  const char* name;
  rung_element_type element_type;
  const int64_t* shape; /* -1 for a dynamic dimension */
  size_t rank;
  const char* const* dim_names; /* rank entries: a dynamic dimension's symbolic name, else "" */
} rung_io_info;

enum { RUNG_INPUTS = 0, RUNG_OUTPUTS = 1 };
/* rung_session_describe: how many inputs (which = RUNG_INPUTS) or outputs
 * the model has; rung_session_io: the index-th of them. Any thread. */
RUNG_API size_t rung_session_describe(const rung_session* session, int32_t which);
RUNG_API rung_status* rung_session_io(const rung_session* session, int32_t which, size_t index, rung_io_info* info);

/* ---- Values ---------------------------------------------------------------- */

typedef struct rung_value rung_value;

/* An input that views the caller's memory: nothing is copied, so `data`
 * must stay unchanged until every run given the value has returned.
 * byte_size must be what the type and shape need. Strings: use
 * rung_value_create_strings. Any thread. */
RUNG_API rung_status* rung_value_create_view(const char* name, rung_element_type type, const int64_t* shape,
                                             size_t rank, const void* data, size_t byte_size, rung_value** out);
/* A string tensor, copied: `count` strings, as many as the shape has elements. */
RUNG_API rung_status* rung_value_create_strings(const char* name, const int64_t* shape, size_t rank,
                                                const char* const* strings, size_t count, rung_value** out);
RUNG_API void rung_value_free(rung_value* value);

/* The value's; any thread. */
RUNG_API const char* rung_value_name(const rung_value* value);
RUNG_API rung_element_type rung_value_element_type(const rung_value* value);
RUNG_API const int64_t* rung_value_shape(const rung_value* value, size_t* rank);
/* The elements, little-endian, C order (NULL and 0 for strings). */
RUNG_API const void* rung_value_data(const rung_value* value, size_t* byte_size);
/* A string tensor's element count and index-th element (NULL past the end or for other types). */
RUNG_API size_t rung_value_string_count(const rung_value* value);
RUNG_API const char* rung_value_string(const rung_value* value, size_t index);

/* Runs the session. Inputs are checked by name, element type and shape before
 * ONNX Runtime sees them: an unknown, missing or repeated name, a wrong type or
 * shape is RUNG_INVALID_ARGUMENT naming the model and the input. On success
 * *outputs is an array of *n_outputs values the caller owns: free it with
 * rung_values_free. Any thread, concurrently on one session. */
RUNG_API rung_status* rung_session_run(rung_session* session, const rung_value* const* inputs, size_t n_inputs,
                                       rung_value*** outputs, size_t* n_outputs);
/* Frees each value and the array rung_session_run returned. */
RUNG_API void rung_values_free(rung_value** values, size_t count);

/* ---- ONNX Runtime's own API (version 2) ------------------------------------ */

/* For an application written against ONNX Runtime (onnxruntime_c_api.h, or
 * onnxruntime_cxx_api.h with ORT_API_MANUAL_INIT): the decision without giving
 * up IO binding, run options and their cancellation, pre-allocated outputs and
 * the rest of ONNX Runtime's API.
 *
 * rung_session_ort_api: the OrtApi table (a const OrtApi*) of the ONNX Runtime
 * build the engine loaded, for Ort::InitApi; entries up to API version
 * rung_session_ort_api_version exist (never call a newer one).
 * rung_session_ort_session: the OrtSession* ONNX Runtime built for this model
 * on the session's rung and form (rung_session_rung, rung_session_model_id).
 *
 * Lifetime: as the rung_session's (until its job is freed); the job's pinning
 * holds, so the OrtSession keeps its rung and form. The OrtSession is shared
 * with rung and other jobs: never release it (an Ort::Session wrapped around
 * it must release() the pointer before it is destroyed). Runs on it may be
 * concurrent with rung_session_run. rung's own run adds the rung's run
 * options (none on the CPU); a run of the application's own does not.
 * NULL (0 for the version) for a NULL session. Any thread. */
RUNG_API const void* rung_session_ort_api(const rung_session* session);
RUNG_API uint32_t rung_session_ort_api_version(const rung_session* session);
RUNG_API void* rung_session_ort_session(const rung_session* session);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RUNG_RUNG_H */
