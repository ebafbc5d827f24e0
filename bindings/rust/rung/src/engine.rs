use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};
use std::time::Duration;

use rung_sys as sys;

use crate::options::ProgressFn;
use crate::value::{ElementType, Value};
use crate::{borrowed_str, cstring, owned_string, Error, ErrorCode, Options, Result};

/// rung's engine: finds and loads the ONNX Runtime build, probes the device in
/// the background and builds the engines the chosen rung needs. Callable from
/// any thread. Dropping it stops the background work (a build in flight is
/// abandoned); its jobs borrow it, so they are gone first.
pub struct Engine {
    raw: NonNull<sys::rung_engine>,
    // Kept alive for the C callback; dropped after rung_engine_free.
    _progress: Option<Box<ProgressFn>>,
}

// The header: every engine function is "any thread".
unsafe impl Send for Engine {}
unsafe impl Sync for Engine {}

impl Engine {
    /// Loads the runtime and starts the probe, returning without waiting for
    /// it. Fails with the status's message: a missing model file, a runtime
    /// that cannot load, a bad option.
    pub fn start(mut options: Options) -> Result<Engine> {
        let progress = options.take_progress()?;
        let mut raw: *mut sys::rung_engine = ptr::null_mut();
        unsafe { Error::check(sys::rung_engine_start(options.as_ptr(), &mut raw))? };
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::new(ErrorCode::Runtime, "rung_engine_start succeeded but gave no engine"))?;
        // The engine copied the options; they are freed here.
        drop(options);
        Ok(Engine { raw, _progress: progress })
    }

    fn ptr(&self) -> *mut sys::rung_engine {
        self.raw.as_ptr()
    }

    /// "CPU · ONNX Runtime 1.30.0 · probing", then the probe's own line.
    pub fn about_line(&self) -> String {
        unsafe { owned_string(sys::rung_engine_about_line(self.ptr())) }
    }

    /// The rung id jobs open on now: "cpu" until the probe reports.
    pub fn chosen_rung(&self) -> String {
        unsafe { owned_string(sys::rung_engine_chosen_rung(self.ptr())) }
    }

    /// Why the probe chose that rung.
    pub fn chosen_reason(&self) -> String {
        unsafe { owned_string(sys::rung_engine_chosen_reason(self.ptr())) }
    }

    /// The progress line, as the callback gets it.
    pub fn progress_line(&self) -> String {
        unsafe { owned_string(sys::rung_engine_progress_line(self.ptr())) }
    }

    /// The whole decision as one JSON document, the C ABI's and every binding's
    /// (schemas/engine-decision.schema.json): the state, the about line, the chosen
    /// rung and why, every rung the probe tried with its verdict, reason and
    /// figures, and what serves each model now. Parse it with any JSON crate.
    pub fn decision_json(&self) -> String {
        unsafe { owned_string(sys::rung_engine_decision_json(self.ptr())) }
    }

    /// Whether the probe has reported.
    pub fn probe_done(&self) -> bool {
        unsafe { sys::rung_engine_probe_done(self.ptr()) != 0 }
    }

    /// Waits until the probe has reported and every engine has landed or
    /// failed: true when settled, false when `timeout` passed first. None
    /// waits as long as it takes.
    pub fn wait_until_settled(&self, timeout: Option<Duration>) -> bool {
        let ms = match timeout {
            None => -1,
            Some(t) => t.as_millis().min(i64::MAX as u128) as i64,
        };
        unsafe { sys::rung_engine_wait_until_settled(self.ptr(), ms) != 0 }
    }

    /// A unit of work: every session it opens stays on the rung and form the
    /// engines had landed when it opened.
    pub fn open_job(&self) -> Result<Job<'_>> {
        let mut raw: *mut sys::rung_job = ptr::null_mut();
        unsafe { Error::check(sys::rung_engine_open_job(self.ptr(), &mut raw))? };
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::new(ErrorCode::Runtime, "rung_engine_open_job succeeded but gave no job"))?;
        Ok(Job { raw, _engine: PhantomData })
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        unsafe { sys::rung_engine_free(self.raw.as_ptr()) }
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("chosen_rung", &self.chosen_rung()).finish()
    }
}

/// A unit of work on one rung, borrowed from its [`Engine`]. Callable from any
/// thread. Dropping it frees its sessions.
pub struct Job<'e> {
    raw: NonNull<sys::rung_job>,
    _engine: PhantomData<&'e Engine>,
}

// The header: every job function is "any thread".
unsafe impl<'e> Send for Job<'e> {}
unsafe impl<'e> Sync for Job<'e> {}

impl<'e> Job<'e> {
    fn ptr(&self) -> *mut sys::rung_job {
        self.raw.as_ptr()
    }

    /// The registered model's session in this job, opened on first use (the
    /// rung below serves when a rung fails to open it). It borrows the job.
    pub fn session(&self, model_name: &str) -> Result<Session<'_>> {
        let c_name = cstring("a model name", model_name)?;
        let mut raw: *mut sys::rung_session = ptr::null_mut();
        unsafe { Error::check(sys::rung_job_session(self.ptr(), c_name.as_ptr(), &mut raw))? };
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::new(ErrorCode::Runtime, "rung_job_session succeeded but gave no session"))?;
        Ok(Session { raw, _job: PhantomData })
    }

    /// The rung this job was pinned to.
    pub fn rung(&self) -> &str {
        unsafe { borrowed_str(sys::rung_job_rung(self.ptr())) }
    }

    /// Model name → model id of every session opened so far: a job's results carry these.
    pub fn model_ids(&self) -> Result<BTreeMap<String, String>> {
        let text = unsafe { sys::rung_job_model_ids_json(self.ptr()) };
        if text.is_null() {
            return Err(Error::new(ErrorCode::Runtime, "rung_job_model_ids_json gave nothing"));
        }
        let text = unsafe { owned_string(text) };
        crate::json::parse_string_map(&text).map_err(|why| {
            Error::new(ErrorCode::Runtime, format!("rung_job_model_ids_json gave unreadable JSON ({}): {}", why, text))
        })
    }
}

impl<'e> Drop for Job<'e> {
    fn drop(&mut self) {
        unsafe { sys::rung_job_free(self.raw.as_ptr()) }
    }
}

impl<'e> std::fmt::Debug for Job<'e> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").field("rung", &self.rung()).finish()
    }
}

/// One input or output as the model declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoInfo {
    /// The input or output's name.
    pub name: String,
    /// Its element type.
    pub element_type: ElementType,
    /// Its shape: -1 for a dynamic dimension.
    pub shape: Vec<i64>,
    /// One per dimension: a dynamic dimension's symbolic name, else "".
    pub dim_names: Vec<String>,
}

/// A model's session in a [`Job`], which owns it (it lives until the job is
/// dropped). Callable from any thread, [`Session::run`] concurrently.
pub struct Session<'j> {
    raw: NonNull<sys::rung_session>,
    _job: PhantomData<&'j ()>,
}

// The header: every session function is "any thread", run concurrently too.
unsafe impl<'j> Send for Session<'j> {}
unsafe impl<'j> Sync for Session<'j> {}

impl<'j> Session<'j> {
    fn ptr(&self) -> *mut sys::rung_session {
        self.raw.as_ptr()
    }

    /// The registered model's name.
    pub fn model_name(&self) -> &str {
        unsafe { borrowed_str(sys::rung_session_model_name(self.ptr())) }
    }

    /// The model id results carry: "ppocr_cls", "ppocr_det_v4_i8".
    pub fn model_id(&self) -> &str {
        unsafe { borrowed_str(sys::rung_session_model_id(self.ptr())) }
    }

    /// The rung id it runs on: "cpu", "rung_sim_ep".
    pub fn rung(&self) -> &str {
        unsafe { borrowed_str(sys::rung_session_rung(self.ptr())) }
    }

    /// Why it runs there.
    pub fn placement_reason(&self) -> &str {
        unsafe { borrowed_str(sys::rung_session_placement_reason(self.ptr())) }
    }

    /// ONNX Runtime's `OrtApi` table (a `*const OrtApi`) of the build the engine
    /// loaded, for code written against ONNX Runtime itself (the `ort` crate's
    /// `set_api`, or a hand-declared call through the table): entries up to
    /// [`Session::ort_api_version`] exist. Valid while this session lives.
    pub fn ort_api(&self) -> *const std::os::raw::c_void {
        unsafe { sys::rung_session_ort_api(self.ptr()) }
    }

    /// The ONNX Runtime API version the table is held at.
    pub fn ort_api_version(&self) -> u32 {
        unsafe { sys::rung_session_ort_api_version(self.ptr()) }
    }

    /// The `OrtSession*` ONNX Runtime built on this session's rung and form.
    /// rung's: valid while this session lives (the job's borrow holds it); never
    /// release it. Runs on it may be concurrent with [`Session::run`].
    pub fn ort_session(&self) -> *mut std::os::raw::c_void {
        unsafe { sys::rung_session_ort_session(self.ptr()) }
    }

    fn describe(&self, which: i32) -> Result<Vec<IoInfo>> {
        let count = unsafe { sys::rung_session_describe(self.ptr(), which) };
        let mut out = Vec::with_capacity(count);
        for index in 0..count {
            let mut info = sys::rung_io_info {
                struct_size: std::mem::size_of::<sys::rung_io_info>(),
                name: ptr::null(),
                element_type: 0,
                shape: ptr::null(),
                rank: 0,
                dim_names: ptr::null(),
            };
            unsafe { Error::check(sys::rung_session_io(self.ptr(), which, index, &mut info))? };
            let shape = if info.shape.is_null() || info.rank == 0 {
                Vec::new()
            } else {
                unsafe { std::slice::from_raw_parts(info.shape, info.rank) }.to_vec()
            };
            let dim_names = if info.dim_names.is_null() {
                vec![String::new(); info.rank]
            } else {
                unsafe { std::slice::from_raw_parts(info.dim_names, info.rank) }
                    .iter()
                    .map(|&p| unsafe { borrowed_str(p) }.to_string())
                    .collect()
            };
            out.push(IoInfo {
                name: unsafe { borrowed_str(info.name) }.to_string(),
                element_type: ElementType::from_raw(info.element_type),
                shape,
                dim_names,
            });
        }
        Ok(out)
    }

    /// The model's inputs as it declares them.
    pub fn inputs(&self) -> Result<Vec<IoInfo>> {
        self.describe(sys::RUNG_INPUTS)
    }

    /// The model's outputs as it declares them.
    pub fn outputs(&self) -> Result<Vec<IoInfo>> {
        self.describe(sys::RUNG_OUTPUTS)
    }

    /// Runs the model. Inputs are checked by name, element type and shape
    /// before ONNX Runtime sees them (an error names the model and the
    /// input). The outputs are owned.
    pub fn run(&self, inputs: &[Value<'_>]) -> Result<Vec<Value<'static>>> {
        let pointers: Vec<*const sys::rung_value> = inputs.iter().map(|v| v.as_ptr()).collect();
        let mut outputs: *mut *mut sys::rung_value = ptr::null_mut();
        let mut count = 0usize;
        unsafe {
            Error::check(sys::rung_session_run(
                self.ptr(),
                pointers.as_ptr(),
                pointers.len(),
                &mut outputs,
                &mut count,
            ))?;
        }
        if outputs.is_null() {
            return if count == 0 {
                Ok(Vec::new())
            } else {
                Err(Error::new(ErrorCode::Runtime, "rung_session_run gave outputs at a NULL pointer"))
            };
        }
        // Each value becomes a Value of its own: its slot is emptied, then
        // rung_values_free frees the array (and frees NULL slots as nothing).
        let mut values = Vec::with_capacity(count);
        let mut missing = false;
        for i in 0..count {
            let slot = unsafe { outputs.add(i) };
            let raw = unsafe { ptr::replace(slot, ptr::null_mut()) };
            match NonNull::new(raw) {
                Some(_) => values.push(unsafe { Value::from_raw(raw, "rung_session_run") }?),
                None => missing = true,
            }
        }
        unsafe { sys::rung_values_free(outputs, count) };
        if missing {
            return Err(Error::new(ErrorCode::Runtime, "rung_session_run gave a NULL output"));
        }
        Ok(values)
    }
}

impl<'j> std::fmt::Debug for Session<'j> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("model_name", &self.model_name()).field("rung", &self.rung()).finish()
    }
}
