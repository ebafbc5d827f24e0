use std::ffi::OsStr;
use std::os::raw::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::ptr::{self, addr_of, NonNull};

use rung_sys as sys;

use crate::{cstring, Error, Result};

/// A registered model's role: how the probe and the forms treat it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// A text detector.
    Detector,
    /// An embedder: always runs f32.
    Embedder,
    /// A segmenter.
    Segmenter,
    /// Any other model.
    Generic,
}

impl Role {
    /// The name the C ABI takes: "detector", "embedder", "segmenter", "generic".
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Detector => "detector",
            Role::Embedder => "embedder",
            Role::Segmenter => "segmenter",
            Role::Generic => "generic",
        }
    }
}

/// What the progress callback is told: the engines the chosen rung needs,
/// how many have landed, and the line to show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    /// Engines the chosen rung needs.
    pub total: usize,
    /// Built or found in the cache so far.
    pub landed: usize,
    /// The model being built now; "" when idle.
    pub building: String,
    /// "Preparing engines · 3 of 6", failures named; "" when done and clean.
    pub line: String,
    /// Every engine has landed or failed.
    pub done: bool,
}

impl Progress {
    /// Reads the members `struct_size` covers; the rest keep their defaults.
    unsafe fn read(p: *const sys::rung_progress) -> Progress {
        fn end<T>(base: *const sys::rung_progress, field: *const T) -> usize {
            field as usize - base as usize + std::mem::size_of::<T>()
        }
        let size = ptr::read(addr_of!((*p).struct_size));
        let mut out = Progress::default();
        if end(p, addr_of!((*p).total)) <= size {
            out.total = ptr::read(addr_of!((*p).total));
        }
        if end(p, addr_of!((*p).landed)) <= size {
            out.landed = ptr::read(addr_of!((*p).landed));
        }
        if end(p, addr_of!((*p).building)) <= size {
            out.building = crate::lossy_string(ptr::read(addr_of!((*p).building)));
        }
        if end(p, addr_of!((*p).line)) <= size {
            out.line = crate::lossy_string(ptr::read(addr_of!((*p).line)));
        }
        if end(p, addr_of!((*p).done)) <= size {
            out.done = ptr::read(addr_of!((*p).done)) != 0;
        }
        out
    }
}

/// The progress callback: called on the engine's background thread.
pub(crate) type ProgressFn = Box<dyn Fn(&Progress) + Send + Sync>;

unsafe extern "C" fn progress_trampoline(user: *mut c_void, progress: *const sys::rung_progress) {
    if user.is_null() || progress.is_null() {
        return;
    }
    // A panic must not unwind into C; the callback's panic is dropped here.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let callback = &*(user as *const ProgressFn);
        callback(&Progress::read(progress));
    }));
}

/// The options an engine starts with: a builder, consumed by
/// [`Engine::start`](crate::Engine::start).
///
/// ```no_run
/// # fn main() -> Result<(), rung::Error> {
/// let options = rung::Options::new()?
///     .set("cache_dir", "/var/cache/myapp/rung")?
///     .add_model("classifier", "models/cls.onnx", rung::Role::Generic)?
///     .on_progress(|p| eprintln!("{}", p.line));
/// # Ok(()) }
/// ```
///
/// Used from one thread at a time (the header's rule), so it is `Send` but not `Sync`.
pub struct Options {
    raw: NonNull<sys::rung_options>,
    progress: Option<Box<ProgressFn>>,
    // A failure of on_progress (which returns Self), reported by Engine::start.
    deferred: Option<Error>,
}

unsafe impl Send for Options {}

impl Options {
    /// Empty options. Fails when the loaded library is older than this crate's ABI.
    pub fn new() -> Result<Options> {
        crate::check_abi_version()?;
        let mut raw: *mut sys::rung_options = ptr::null_mut();
        unsafe { Error::check(sys::rung_options_create(&mut raw))? };
        let raw = NonNull::new(raw).ok_or_else(|| {
            Error::new(crate::ErrorCode::Runtime, "rung_options_create succeeded but gave no options")
        })?;
        Ok(Options { raw, progress: None, deferred: None })
    }

    /// Sets one option from text (rung.h lists the keys: cache_dir, plugin_dir,
    /// runtime_dir, worker, forced_rung, probe_runs, ..., and per model
    /// `model.NAME.input_spec`). An unknown key, or a value its key cannot
    /// take, is an error naming both. A path value must be UTF-8.
    pub fn set(self, key: &str, value: impl AsRef<OsStr>) -> Result<Options> {
        let c_key = cstring("an option key", key)?;
        let value = value.as_ref().to_str().ok_or_else(|| {
            Error::invalid(format!("option {}: the value is not UTF-8: {}", key, value.as_ref().to_string_lossy()))
        })?;
        let c_value = cstring(&format!("option {}", key), value)?;
        unsafe { Error::check(sys::rung_options_set(self.raw.as_ptr(), c_key.as_ptr(), c_value.as_ptr()))? };
        Ok(self)
    }

    /// Registers a model: a unique name, its canonical f32 file (UTF-8 path) and its role.
    pub fn add_model(self, name: &str, path: impl AsRef<Path>, role: Role) -> Result<Options> {
        let path = path.as_ref();
        let c_name = cstring("a model name", name)?;
        let path_text = path
            .to_str()
            .ok_or_else(|| Error::invalid(format!("model {}: the path is not UTF-8: {}", name, path.display())))?;
        let c_path = cstring(&format!("model {}'s path", name), path_text)?;
        let c_role = cstring("a role", role.as_str())?;
        unsafe {
            Error::check(sys::rung_options_add_model(
                self.raw.as_ptr(),
                c_name.as_ptr(),
                c_path.as_ptr(),
                c_role.as_ptr(),
            ))?
        };
        Ok(self)
    }

    /// The progress callback, replacing any earlier one. It is called on the
    /// engine's background thread each time the progress changes, must return
    /// quickly and must not drop the engine, and is kept alive by the engine;
    /// a panic in it is caught and dropped (it must not unwind into C).
    pub fn on_progress<F>(mut self, callback: F) -> Options
    where
        F: Fn(&Progress) + Send + Sync + 'static,
    {
        // Boxed twice: the outer box's address is the `user` pointer and stays
        // put while the box moves from Options into the Engine.
        let boxed: Box<ProgressFn> = Box::new(Box::new(callback));
        let user = &*boxed as *const ProgressFn as *mut c_void;
        let status = unsafe { sys::rung_options_set_progress(self.raw.as_ptr(), Some(progress_trampoline), user) };
        match unsafe { Error::check(status) } {
            Ok(()) => self.progress = Some(boxed),
            Err(e) => {
                if self.deferred.is_none() {
                    self.deferred = Some(e)
                }
            }
        }
        self
    }

    pub(crate) fn as_ptr(&self) -> *const sys::rung_options {
        self.raw.as_ptr()
    }

    /// The callback (for the engine to keep) and any deferred failure.
    pub(crate) fn take_progress(&mut self) -> Result<Option<Box<ProgressFn>>> {
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        Ok(self.progress.take())
    }
}

impl Drop for Options {
    fn drop(&mut self) {
        unsafe { sys::rung_options_free(self.raw.as_ptr()) }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options").field("progress", &self.progress.is_some()).finish()
    }
}
