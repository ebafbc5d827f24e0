//! Raw declarations of rung's C ABI, `rung/rung.h`, written by hand.
//!
//! Everything here is `unsafe` and mirrors the header one to one: opaque
//! handles, the two `#[repr(C)]` structs, the enums as `i32` constants (a C
//! enum the header keeps 32 bits wide; an integer, so a value a newer library
//! adds is not undefined behaviour), and the functions. The header is the
//! contract: ownership, thread-safety and lifetimes are stated there. The safe
//! API is the `rung` crate.
//!
//! The build script links `librung_engine` from `RUNG_LIB_DIR`, else from
//! `pkg-config --variable=libdir rung-engine`.
#![allow(non_camel_case_types)]

use std::marker::{PhantomData, PhantomPinned};
// std::os::raw, not std::ffi: the latter's c_char is newer than Rust 1.63.
pub use std::os::raw::{c_char, c_void};

/// The ABI version this crate was written against (`RUNG_ABI_VERSION`).
pub const RUNG_ABI_VERSION: i32 = 3;

macro_rules! opaque {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        #[repr(C)]
        pub struct $name {
            _data: [u8; 0],
            // Neither Send, Sync nor Unpin: only pointers to it exist.
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
    )*};
}

opaque!(
    /// A failure: code and message. NULL means success.
    rung_status,
    /// The options an engine starts with.
    rung_options,
    /// The engine: runtime, probe and engine builds.
    rung_engine,
    /// A unit of work pinned to one rung.
    rung_job,
    /// A model's session in a job (the job's; never freed on its own).
    rung_session,
    /// A tensor: an input viewing the caller's memory, or an output.
    rung_value,
);

/// `rung_error_code`.
pub type rung_error_code = i32;
pub const RUNG_OK: rung_error_code = 0;
pub const RUNG_INVALID_ARGUMENT: rung_error_code = 1;
pub const RUNG_NOT_FOUND: rung_error_code = 2;
pub const RUNG_PERMISSION: rung_error_code = 3;
pub const RUNG_LOAD_FAILED: rung_error_code = 4;
pub const RUNG_UNSUPPORTED: rung_error_code = 5;
pub const RUNG_RUNTIME: rung_error_code = 6;
pub const RUNG_IO: rung_error_code = 7;
pub const RUNG_NO_RUNTIME: rung_error_code = 8;

/// `rung_element_type`: ONNX's TensorProto numbers.
pub type rung_element_type = i32;
pub const RUNG_FLOAT32: rung_element_type = 1;
pub const RUNG_UINT8: rung_element_type = 2;
pub const RUNG_INT8: rung_element_type = 3;
pub const RUNG_UINT16: rung_element_type = 4;
pub const RUNG_INT16: rung_element_type = 5;
pub const RUNG_INT32: rung_element_type = 6;
pub const RUNG_INT64: rung_element_type = 7;
pub const RUNG_STRING: rung_element_type = 8;
pub const RUNG_BOOL: rung_element_type = 9;
pub const RUNG_FLOAT16: rung_element_type = 10;
pub const RUNG_FLOAT64: rung_element_type = 11;
pub const RUNG_UINT32: rung_element_type = 12;
pub const RUNG_UINT64: rung_element_type = 13;
pub const RUNG_BFLOAT16: rung_element_type = 16;
pub const RUNG_FLOAT8E4M3FN: rung_element_type = 17;
pub const RUNG_FLOAT8E4M3FNUZ: rung_element_type = 18;
pub const RUNG_FLOAT8E5M2: rung_element_type = 19;
pub const RUNG_FLOAT8E5M2FNUZ: rung_element_type = 20;

/// `which` for `rung_session_describe` and `rung_session_io`.
pub const RUNG_INPUTS: i32 = 0;
pub const RUNG_OUTPUTS: i32 = 1;

/// What the progress callback is told; read a member only when `struct_size`
/// covers it. The pointers live only during the call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rung_progress {
    pub struct_size: usize,
    pub total: usize,
    pub landed: usize,
    pub building: *const c_char,
    pub line: *const c_char,
    pub done: i32,
}

/// One input or output as the model declares it; set `struct_size` before
/// `rung_session_io`. Its pointers are the session's.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rung_io_info {
    pub struct_size: usize,
    pub name: *const c_char,
    pub element_type: rung_element_type,
    pub shape: *const i64,
    pub rank: usize,
    pub dim_names: *const *const c_char,
}

/// Called on the engine's background thread each time the progress changes.
pub type rung_progress_fn = Option<unsafe extern "C" fn(user: *mut c_void, progress: *const rung_progress)>;

extern "C" {
    pub fn rung_abi_version() -> i32;
    pub fn rung_version_string() -> *const c_char;

    pub fn rung_status_code(status: *const rung_status) -> rung_error_code;
    pub fn rung_status_message(status: *const rung_status) -> *const c_char;
    pub fn rung_status_exit_code(status: *const rung_status) -> i32;
    pub fn rung_status_free(status: *mut rung_status);

    pub fn rung_string_free(text: *mut c_char);

    pub fn rung_options_create(out: *mut *mut rung_options) -> *mut rung_status;
    pub fn rung_options_free(options: *mut rung_options);
    pub fn rung_options_set(options: *mut rung_options, key: *const c_char, value: *const c_char) -> *mut rung_status;
    pub fn rung_options_add_model(
        options: *mut rung_options,
        name: *const c_char,
        path: *const c_char,
        role: *const c_char,
    ) -> *mut rung_status;
    pub fn rung_options_set_progress(
        options: *mut rung_options,
        callback: rung_progress_fn,
        user: *mut c_void,
    ) -> *mut rung_status;

    pub fn rung_engine_start(options: *const rung_options, out: *mut *mut rung_engine) -> *mut rung_status;
    pub fn rung_engine_free(engine: *mut rung_engine);
    pub fn rung_engine_about_line(engine: *const rung_engine) -> *mut c_char;
    pub fn rung_engine_chosen_rung(engine: *const rung_engine) -> *mut c_char;
    pub fn rung_engine_chosen_reason(engine: *const rung_engine) -> *mut c_char;
    pub fn rung_engine_progress_line(engine: *const rung_engine) -> *mut c_char;
    pub fn rung_engine_decision_json(engine: *const rung_engine) -> *mut c_char;
    pub fn rung_engine_probe_done(engine: *const rung_engine) -> i32;
    pub fn rung_engine_wait_until_settled(engine: *const rung_engine, timeout_ms: i64) -> i32;

    pub fn rung_engine_open_job(engine: *mut rung_engine, out: *mut *mut rung_job) -> *mut rung_status;
    pub fn rung_job_free(job: *mut rung_job);
    pub fn rung_job_rung(job: *const rung_job) -> *const c_char;
    pub fn rung_job_model_ids_json(job: *const rung_job) -> *mut c_char;

    pub fn rung_job_session(
        job: *mut rung_job,
        model_name: *const c_char,
        out: *mut *mut rung_session,
    ) -> *mut rung_status;
    pub fn rung_session_model_name(session: *const rung_session) -> *const c_char;
    pub fn rung_session_model_id(session: *const rung_session) -> *const c_char;
    pub fn rung_session_rung(session: *const rung_session) -> *const c_char;
    pub fn rung_session_placement_reason(session: *const rung_session) -> *const c_char;

    pub fn rung_element_type_name(element_type: rung_element_type) -> *const c_char;

    pub fn rung_session_describe(session: *const rung_session, which: i32) -> usize;
    pub fn rung_session_io(
        session: *const rung_session,
        which: i32,
        index: usize,
        info: *mut rung_io_info,
    ) -> *mut rung_status;

    pub fn rung_value_create_view(
        name: *const c_char,
        element_type: rung_element_type,
        shape: *const i64,
        rank: usize,
        data: *const c_void,
        byte_size: usize,
        out: *mut *mut rung_value,
    ) -> *mut rung_status;
    pub fn rung_value_create_strings(
        name: *const c_char,
        shape: *const i64,
        rank: usize,
        strings: *const *const c_char,
        count: usize,
        out: *mut *mut rung_value,
    ) -> *mut rung_status;
    pub fn rung_value_free(value: *mut rung_value);
    pub fn rung_value_name(value: *const rung_value) -> *const c_char;
    pub fn rung_value_element_type(value: *const rung_value) -> rung_element_type;
    pub fn rung_value_shape(value: *const rung_value, rank: *mut usize) -> *const i64;
    pub fn rung_value_data(value: *const rung_value, byte_size: *mut usize) -> *const c_void;
    pub fn rung_value_string_count(value: *const rung_value) -> usize;
    pub fn rung_value_string(value: *const rung_value, index: usize) -> *const c_char;

    pub fn rung_session_run(
        session: *mut rung_session,
        inputs: *const *const rung_value,
        n_inputs: usize,
        outputs: *mut *mut *mut rung_value,
        n_outputs: *mut usize,
    ) -> *mut rung_status;
    pub fn rung_values_free(values: *mut *mut rung_value, count: usize);

    // Version 2: ONNX Runtime's own handles (a `const OrtApi*` and an `OrtSession*`).
    pub fn rung_session_ort_api(session: *const rung_session) -> *const c_void;
    pub fn rung_session_ort_api_version(session: *const rung_session) -> u32;
    pub fn rung_session_ort_session(session: *const rung_session) -> *mut c_void;
}
