//! rung from Rust: puts each ONNX model on the fastest execution provider
//! that really works on this device, through rung's C ABI (`rung/rung.h`).
//!
//! An application starts an [`Engine`] once at launch; the probe and the
//! engine builds run in the background while jobs already run (on the CPU
//! until the probe reports). A [`Job`] pins every [`Session`] it opens to one
//! rung; inputs are [`Value`]s that view the caller's memory without a copy.
//!
//! ```no_run
//! use rung::{Engine, Options, Role, Value};
//!
//! fn main() -> Result<(), rung::Error> {
//!     let options = Options::new()?
//!         .set("cache_dir", "/var/cache/myapp/rung")?
//!         .add_model("cls", "models/cls.onnx", Role::Generic)?
//!         .on_progress(|p| eprintln!("{}", p.line));
//!     let engine = Engine::start(options)?;
//!     println!("{}", engine.about_line());
//!     engine.wait_until_settled(Some(std::time::Duration::from_secs(60)));
//!     let job = engine.open_job()?;
//!     let pixels = vec![0f32; 3 * 48 * 192];
//!     let outputs = job.session("cls")?.run(&[Value::view("x", &pixels, &[1, 3, 48, 192])?])?;
//!     println!("{:?} on {}", outputs[0].as_slice::<f32>()?, job.rung());
//!     Ok(())
//! }
//! ```
//!
//! Linking: the `rung-sys` build script takes librung_engine's directory from
//! `RUNG_LIB_DIR`, else from `pkg-config --variable=libdir rung-engine`.
//!
//! Threads follow the header: [`Engine`], [`Job`] and [`Session`] are `Send +
//! Sync` (any thread); [`Options`] is `Send` only (one thread at a time);
//! [`Value`] is `Send + Sync`, read-only once made. Every failing call is an
//! [`Error`] carrying the library's message; every handle is freed on drop.
//!
//! The borrows hold: a job cannot outlive its engine, nor a session its job,
//! and options cannot be shared between threads.
//!
//! ```compile_fail
//! fn job_outlives_engine(options: rung::Options) -> Result<(), rung::Error> {
//!     let job = {
//!         let engine = rung::Engine::start(options)?;
//!         engine.open_job()?
//!     };
//!     Ok(())
//! }
//! ```
//!
//! ```compile_fail
//! fn sync<T: Sync>() {}
//! sync::<rung::Options>();
//! ```
#![warn(missing_docs)]

use std::borrow::Cow;
use std::ffi::{CStr, CString};
use std::os::raw::c_char;

pub use rung_sys as sys;

mod engine;
mod error;
mod json;
mod options;
mod value;

pub use engine::{Engine, IoInfo, Job, Session};
pub use error::{Error, ErrorCode, Result};
pub use options::{Options, Progress, Role};
pub use value::{Element, ElementType, Value};

/// The ABI version of the loaded library (`rung_abi_version`).
pub fn abi_version() -> i32 {
    unsafe { sys::rung_abi_version() }
}

/// The loaded library's release, "0.1.0".
pub fn version() -> &'static str {
    // Static storage in the library.
    unsafe { borrowed_str(sys::rung_version_string()) }
}

/// An error unless the loaded library is at least as new as these declarations.
pub(crate) fn check_abi_version() -> Result<()> {
    let loaded = abi_version();
    if loaded < sys::RUNG_ABI_VERSION {
        return Err(Error::new(
            ErrorCode::Unsupported,
            format!(
                "the loaded librung_engine has ABI version {}, older than the {} this crate needs",
                loaded,
                sys::RUNG_ABI_VERSION
            ),
        ));
    }
    Ok(())
}

/// Text for a C call; an error naming `what` when it holds a NUL byte.
pub(crate) fn cstring(what: &str, text: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::invalid(format!("{} holds a NUL byte: {:?}", what, text)))
}

/// A const char* the library keeps, as &str ("" for NULL). The library's text
/// is UTF-8; should a byte not be, the text ends before it.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string that lives for `'a`.
pub(crate) unsafe fn borrowed_str<'a>(p: *const c_char) -> &'a str {
    if p.is_null() {
        return "";
    }
    let bytes = CStr::from_ptr(p).to_bytes();
    match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or(""),
    }
}

/// A const char* copied into a String, invalid UTF-8 replaced ("" for NULL).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub(crate) unsafe fn lossy_string(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    match CStr::from_ptr(p).to_string_lossy() {
        Cow::Borrowed(text) => text.to_string(),
        Cow::Owned(text) => text,
    }
}

/// A char* the library handed over, copied and freed ("" for NULL).
///
/// # Safety
/// `p` is NULL or a string a rung_ function returned to the caller.
pub(crate) unsafe fn owned_string(p: *mut c_char) -> String {
    let text = lossy_string(p);
    if !p.is_null() {
        sys::rung_string_free(p);
    }
    text
}
