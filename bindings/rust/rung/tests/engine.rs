//! The Rust binding against the C++ engine's own result: ctest's rust.binding
//! runs these with RUNG_ABI_TEST_ENV (tests/CMakeLists.txt) after the
//! abi_reference fixture wrote RUNG_TEST_REFERENCE_DIR. Each test starts its
//! own engine on its own cache directory, so they may run in parallel.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rung::{ElementType, Engine, ErrorCode, Options, Role, Value};

/// A variable ctest sets; its absence is a failure, never a skip.
fn env(name: &str) -> String {
    match std::env::var(name) {
        Ok(value) if !value.is_empty() => value,
        _ => panic!(
            "environment variable {} is not set: run these tests through ctest (rust.binding), \
             which sets RUNG_ABI_TEST_ENV, or set it by hand",
            name
        ),
    }
}

/// A fresh directory, removed on drop (declare it before the engine, so the
/// engine is dropped first).
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "rung-rust-{}-{}-{}-{}",
            tag,
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst),
            nanos
        ));
        // Private and new: a directory someone else planted there is refused.
        fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .unwrap_or_else(|e| panic!("cannot make {}: {}", dir.display(), e));
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// reference.txt and the tensors beside it, as the C++ engine wrote them.
struct Reference {
    keys: BTreeMap<String, String>,
    dir: PathBuf,
}

impl Reference {
    fn load() -> Reference {
        let dir = PathBuf::from(env("RUNG_TEST_REFERENCE_DIR"));
        let path = dir.join("reference.txt");
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {}", path.display(), e));
        let keys = text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                let (k, v) =
                    line.split_once('=').unwrap_or_else(|| panic!("{}: a line without '=': {}", path.display(), line));
                (k.trim().to_string(), v.trim().to_string())
            })
            .collect();
        Reference { keys, dir }
    }

    fn get(&self, key: &str) -> &str {
        self.keys.get(key).unwrap_or_else(|| panic!("reference.txt has no {}", key))
    }

    fn shape(&self, key: &str) -> Vec<i64> {
        self.get(key)
            .split(',')
            .map(|d| d.trim().parse::<i64>().unwrap_or_else(|_| panic!("reference.txt {}: bad dimension {}", key, d)))
            .collect()
    }

    fn bytes(&self, file: &str) -> Vec<u8> {
        let path = self.dir.join(file);
        fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {}", path.display(), e))
    }

    /// input.bin as float32 values (the classifier's input type).
    fn input(&self) -> Vec<f32> {
        assert_eq!(self.get("input_type"), "float32", "these tests feed a float32 input");
        let bytes = self.bytes("input.bin");
        assert_eq!(bytes.len() % 4, 0, "input.bin is not whole float32 values");
        bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }
}

/// Exactly the options every binding's test uses (the C++ reference's too:
/// tests/abi-reference.cc). acceptance_ratio=1000 rather than forcing a rung
/// (only a rung below the chosen one can be forced): the simulated
/// accelerator is taken however fast it is on the day.
fn options(cache: &Path, model_name: &str, model_path: &Path) -> Options {
    Options::new()
        .and_then(|o| o.set("cache_dir", cache))
        .and_then(|o| o.set("plugin_dir", env("RUNG_TEST_PLUGIN_DIR")))
        .and_then(|o| o.set("runtime_dir", env("RUNG_TEST_RUNTIME_DIR")))
        .and_then(|o| o.set("runtime_default_locations", "false"))
        .and_then(|o| o.set("runtime_environment", "false"))
        .and_then(|o| o.set("worker", env("RUNG_TEST_WORKER")))
        .and_then(|o| o.set("hardware_root", env("RUNG_TEST_HARDWARE_ROOT")))
        .and_then(|o| o.set("probe_runs", "1"))
        .and_then(|o| o.set("inference_threads", "1"))
        .and_then(|o| o.set("acceptance_ratio", "1000"))
        .and_then(|o| o.add_model(model_name, model_path, Role::Generic))
        .unwrap_or_else(|e| panic!("the test's options were refused: {}", e))
}

const SETTLE: Duration = Duration::from_secs(300);

/// An engine on the reference's model, settled.
fn settled_engine(cache: &Path, reference: &Reference) -> Engine {
    let model = PathBuf::from(env("RUNG_TEST_MODEL"));
    let engine = Engine::start(options(cache, reference.get("model_name"), &model))
        .unwrap_or_else(|e| panic!("Engine::start failed: {}", e));
    assert!(
        engine.wait_until_settled(Some(SETTLE)),
        "the engine did not settle in {:?}: {}",
        SETTLE,
        engine.progress_line()
    );
    engine
}

#[test]
fn classifier_matches_cpp_engine_bit_for_bit() {
    let reference = Reference::load();
    let cache = TempDir::new("match");
    let model_name = reference.get("model_name").to_string();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let model = PathBuf::from(env("RUNG_TEST_MODEL"));
    let engine = Engine::start(options(cache.path(), &model_name, &model).on_progress(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    }))
    .unwrap_or_else(|e| panic!("Engine::start failed: {}", e));
    assert!(!engine.about_line().is_empty(), "the about line is empty");
    assert!(engine.wait_until_settled(Some(SETTLE)), "not settled: {}", engine.progress_line());
    assert!(engine.probe_done());
    assert_eq!(engine.chosen_rung(), reference.get("rung"), "chosen: {}", engine.chosen_reason());
    assert!(!engine.about_line().is_empty(), "the about line is empty");

    let job = engine.open_job().unwrap_or_else(|e| panic!("open_job: {}", e));
    let session = job.session(&model_name).unwrap_or_else(|e| panic!("session: {}", e));
    assert_eq!(session.model_name(), model_name);
    assert_eq!(session.rung(), reference.get("rung"), "placed: {}", session.placement_reason());
    assert_eq!(job.rung(), reference.get("rung"));
    assert_eq!(session.model_id(), reference.get("model_id"));

    let pixels = reference.input();
    let expected = reference.bytes("output.bin");
    let input = Value::view(reference.get("input_name"), &pixels, &reference.shape("input_shape")).unwrap();
    assert_eq!(input.name(), reference.get("input_name"));
    assert_eq!(input.bytes().len(), pixels.len() * 4);
    assert_eq!(input.bytes().as_ptr(), pixels.as_ptr() as *const u8, "a view copied the caller's memory");
    let outputs = session.run(&[input]).unwrap_or_else(|e| panic!("run: {}", e));
    assert!(!outputs.is_empty(), "no outputs");
    let out = &outputs[0];
    assert_eq!(out.name(), reference.get("output_name"));
    assert_eq!(out.element_type().name(), reference.get("output_type"));
    assert_eq!(out.shape(), &reference.shape("output_shape")[..]);
    assert!(
        out.bytes() == &expected[..],
        "output bytes differ: {:02x?} vs the C++ engine's {:02x?}",
        out.bytes(),
        expected
    );
    if out.element_type() == ElementType::Float32 {
        assert_eq!(out.as_slice::<f32>().unwrap().len() * 4, expected.len());
        assert!(out.as_slice::<i64>().is_err(), "as_slice took the wrong type");
    }

    let ids = job.model_ids().unwrap_or_else(|e| panic!("model_ids: {}", e));
    let mut want = BTreeMap::new();
    want.insert(model_name.clone(), reference.get("model_id").to_string());
    assert_eq!(ids, want);

    // The session is Sync: runs from two threads at once give the same bytes.
    std::thread::scope(|s| {
        let runs: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let input =
                        Value::view(reference.get("input_name"), &pixels, &reference.shape("input_shape")).unwrap();
                    session.run(&[input]).unwrap()[0].bytes().to_vec()
                })
            })
            .collect();
        for run in runs {
            assert!(run.join().unwrap() == expected, "a concurrent run gave other bytes");
        }
    });

    assert!(calls.load(Ordering::SeqCst) >= 1, "the progress callback was never called");

    // Outputs are owned: they outlive the session, the job and the engine.
    drop(job);
    drop(engine);
    assert!(outputs[0].bytes() == &expected[..], "an output changed once the engine was freed");
}

#[test]
fn handles_are_send_and_sync_as_the_header_says() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Engine>();
    send_sync::<rung::Job<'static>>();
    send_sync::<rung::Session<'static>>();
    send_sync::<Value<'static>>();
    send::<Options>(); // one thread at a time: Send, not Sync (a compile_fail doc test checks)
}

#[test]
fn missing_model_file_fails_start_naming_it() {
    let reference = Reference::load();
    let cache = TempDir::new("missing");
    let missing = cache.path().join("no-such-model.onnx");
    let err = Engine::start(options(cache.path(), reference.get("model_name"), &missing))
        .expect_err("Engine::start accepted a model file that does not exist");
    assert!(err.message.contains("no-such-model.onnx"), "the message does not name the file: {}", err);
    assert_eq!(err.code, ErrorCode::NotFound, "{}", err);
    assert_eq!(err.exit_code(), 2);
}

#[test]
fn wrong_input_shape_fails_naming_the_input() {
    let reference = Reference::load();
    let cache = TempDir::new("shape");
    let engine = settled_engine(cache.path(), &reference);
    let job = engine.open_job().unwrap();
    let session = job.session(reference.get("model_name")).unwrap();
    let name = reference.get("input_name");
    let pixels = reference.input();

    // Bytes that do not fill the shape: refused when the value is made.
    let err = Value::view(name, &pixels, &[1, 3, 10]).expect_err("a view whose shape is not its byte count");
    assert!(err.message.contains(name), "the message does not name input {}: {}", name, err);
    assert_eq!(err.code, ErrorCode::InvalidArgument);

    // The right byte count in a shape the model cannot take (it declares 3
    // channels; 6 of half the width hold as many values): refused by run.
    let fed = reference.shape("input_shape");
    assert_eq!(fed.len(), 4, "the classifier's input is N x C x H x W");
    let wrong = [fed[0], fed[1] * 2, fed[2], fed[3] / 2];
    assert_eq!(wrong.iter().product::<i64>(), pixels.len() as i64);
    let input = Value::view(name, &pixels, &wrong).unwrap();
    let err = session.run(&[input]).expect_err("run accepted 6 channels where the model declares 3");
    assert!(err.message.contains(name), "the message does not name input {}: {}", name, err);
    assert_eq!(err.code, ErrorCode::InvalidArgument, "{}", err);
    // A rank the model does not declare is refused as well.
    let flat = [pixels.len() as i64];
    let err = session.run(&[Value::view(name, &pixels, &flat).unwrap()]).expect_err("run accepted a rank-1 input");
    assert!(err.message.contains(name), "the message does not name input {}: {}", name, err);
    assert!(err.message.contains(reference.get("model_name")), "the message does not name the model: {}", err);
}

#[test]
fn unknown_option_key_fails_naming_it() {
    let err = Options::new().unwrap().set("no_such_option_key", "1").expect_err("an unknown key was accepted");
    assert!(err.message.contains("no_such_option_key"), "the message does not name the key: {}", err);
    assert_eq!(err.exit_code(), 2, "{}", err);
    // A bad value names the key too.
    let err = Options::new().unwrap().set("probe_runs", "many").expect_err("probe_runs=many was accepted");
    assert!(err.message.contains("probe_runs"), "the message does not name the key: {}", err);
}

#[test]
fn wrong_input_name_fails_naming_it() {
    let reference = Reference::load();
    let cache = TempDir::new("name");
    let engine = settled_engine(cache.path(), &reference);
    let job = engine.open_job().unwrap();
    let session = job.session(reference.get("model_name")).unwrap();
    let pixels = reference.input();
    let input = Value::view("not_the_input", &pixels, &reference.shape("input_shape")).unwrap();
    let err = session.run(&[input]).expect_err("run accepted an input the model does not have");
    assert!(err.message.contains("not_the_input"), "the message does not name the input: {}", err);
    assert_eq!(err.code, ErrorCode::InvalidArgument, "{}", err);

    // An unknown model name fails as well, naming it.
    let err = job.session("no_such_model").expect_err("a session for a model never registered");
    assert!(err.message.contains("no_such_model"), "{}", err);
}

#[test]
fn describe_reports_dynamic_dims_as_minus_one() {
    let reference = Reference::load();
    let cache = TempDir::new("describe");
    let engine = settled_engine(cache.path(), &reference);
    let job = engine.open_job().unwrap();
    let session = job.session(reference.get("model_name")).unwrap();

    let inputs = session.inputs().unwrap();
    let input = inputs
        .iter()
        .find(|io| io.name == reference.get("input_name"))
        .unwrap_or_else(|| panic!("inputs() lacks {}: {:?}", reference.get("input_name"), inputs));
    assert_eq!(input.element_type.name(), reference.get("input_type"));
    let fed = reference.shape("input_shape");
    assert_eq!(input.shape.len(), fed.len(), "{:?}", input);
    assert_eq!(input.dim_names.len(), input.shape.len(), "{:?}", input);
    for (declared, given) in input.shape.iter().zip(&fed) {
        assert!(*declared == -1 || declared == given, "declared {:?}, fed {:?}", input.shape, fed);
    }
    assert!(input.shape.contains(&-1), "the classifier's batch is dynamic, yet {:?}", input.shape);
    for (dim, name) in input.shape.iter().zip(&input.dim_names) {
        assert!(*dim == -1 || name.is_empty(), "a fixed dimension has a symbolic name: {:?}", input);
    }

    let outputs = session.outputs().unwrap();
    let output = outputs
        .iter()
        .find(|io| io.name == reference.get("output_name"))
        .unwrap_or_else(|| panic!("outputs() lacks {}: {:?}", reference.get("output_name"), outputs));
    assert_eq!(output.element_type.name(), reference.get("output_type"));
}

#[test]
fn values_keep_name_type_shape_and_contents() {
    let data = [1i64, -2, 3, -4, 5, -6];
    let v = Value::view("ids", &data, &[2, 3]).unwrap();
    assert_eq!((v.name(), v.element_type(), v.shape()), ("ids", ElementType::Int64, &[2i64, 3][..]));
    assert_eq!(v.as_slice::<i64>().unwrap(), &data[..]);
    assert!(v.as_slice::<f64>().is_err());
    assert!(v.as_strings().is_err());

    let flags = [true, false, true];
    let b = Value::view("flags", &flags, &[3]).unwrap();
    assert_eq!(b.as_slice::<bool>().unwrap(), &flags[..]);
    assert_eq!(b.bytes(), &[1u8, 0, 1][..]);

    let half = [0u8, 0x3c, 0, 0xc0]; // 1.0 and -2.0 as float16
    let h = Value::view_bytes("half", ElementType::Float16, &half, &[2]).unwrap();
    assert_eq!((h.element_type().name(), h.bytes()), ("float16", &half[..]));
    assert!(Value::view_bytes("half", ElementType::Float16, &half, &[3]).is_err());

    let s = Value::strings("words", &["größe", "", "x"], &[3]).unwrap();
    assert_eq!(s.element_type(), ElementType::String);
    assert_eq!(s.as_strings().unwrap(), vec!["größe", "", "x"]);
    assert!(s.bytes().is_empty());
    let err = Value::strings("words", &["a", "b"], &[3]).expect_err("3 elements from 2 strings");
    assert!(err.message.contains("words"), "{}", err);
    assert!(Value::strings("words", &["a\0b"], &[1]).is_err());
}

/// The application named the directory: its build serves or the start says why
/// (a library that does not load), never another build in its place.
#[test]
fn named_runtime_that_does_not_load_is_load_failed() {
    let reference = Reference::load();
    let cache = TempDir::new("fake-runtime");
    let model = PathBuf::from(env("RUNG_TEST_MODEL"));
    let options = options(cache.path(), reference.get("model_name"), &model)
        .set("runtime_dir", env("RUNG_TEST_FAKE_RUNTIME"))
        .unwrap();
    let err = Engine::start(options).expect_err("an engine started on a runtime build that does not load");
    assert_eq!(err.code, ErrorCode::LoadFailed, "{}", err);
    assert_eq!(err.exit_code(), 1, "{}", err);
    assert!(err.message.contains("cannot serve"), "{}", err);
}

/// A timeout saturates at each end: Duration::MAX (i64::MAX ms through the ABI)
/// waits for ever rather than returning at once, zero does not wait.
#[test]
fn wait_until_settled_saturates_at_each_end() {
    let reference = Reference::load();
    let cache = TempDir::new("wait");
    let engine = settled_engine(cache.path(), &reference);
    assert!(engine.wait_until_settled(Some(Duration::MAX)), "Duration::MAX returned before settling");
    assert!(engine.wait_until_settled(Some(Duration::from_millis(u64::MAX))), "u64::MAX ms returned before settling");
    assert!(engine.wait_until_settled(Some(Duration::ZERO)), "settled: zero answers at once");
    assert!(engine.wait_until_settled(Some(Duration::from_millis(1))));
    assert!(engine.wait_until_settled(None));
}

/// ONNX Runtime's own API over the handed pointers, by a hand-declared call:
/// `SessionGetInputCount` is entry 30 of the `OrtApi` table (a struct of
/// function pointers whose order ONNX Runtime never changes).
#[test]
fn onnxruntime_api_over_the_handed_session_by_a_hand_declared_call() {
    type SessionGetInputCount = unsafe extern "C" fn(*const std::os::raw::c_void, *mut usize) -> *mut std::os::raw::c_void;
    const SESSION_GET_INPUT_COUNT: usize = 30;
    let reference = Reference::load();
    let cache = TempDir::new("ort-interop");
    let engine = settled_engine(cache.path(), &reference);
    let job = engine.open_job().unwrap();
    let session = job.session(reference.get("model_name")).unwrap();
    assert!(session.ort_api_version() >= 17, "API version {}", session.ort_api_version());
    let table = session.ort_api() as *const Option<SessionGetInputCount>;
    assert!(!table.is_null() && !session.ort_session().is_null());
    let get_input_count = unsafe { (*table.add(SESSION_GET_INPUT_COUNT)).expect("the table has SessionGetInputCount") };
    let mut count = 0usize;
    let status = unsafe { get_input_count(session.ort_session(), &mut count) };
    assert!(status.is_null(), "SessionGetInputCount returned an OrtStatus");
    assert_eq!(count, 1, "the classifier has one input");
}

/// The document without its one line that names where the cache lies (a copy's differs).
fn without_cache_file(doc: &str) -> String {
    doc.lines().filter(|l| !l.trim_start().starts_with("\"cache_file\":")).collect::<Vec<_>>().join("\n")
}

/// A copy of a directory tree (the reference's cache): files and folders only.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap_or_else(|e| panic!("cannot make {}: {}", to.display(), e));
    for entry in fs::read_dir(from).unwrap_or_else(|e| panic!("cannot list {}: {}", from.display(), e)) {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap_or_else(|e| panic!("cannot copy {}: {}", entry.path().display(), e));
        }
    }
}

#[test]
fn decision_document_is_the_cpp_engines() {
    let reference = Reference::load();
    let scratch = TempDir::new("decision");
    let cache = scratch.path().join("cache");
    let reference_dir = PathBuf::from(env("RUNG_TEST_REFERENCE_DIR"));
    copy_tree(&reference_dir.join("decision-cache"), &cache);
    let engine = settled_engine(&cache, &reference);
    let doc = engine.decision_json();
    let expected = fs::read_to_string(reference_dir.join("decision.json")).unwrap();
    assert_eq!(without_cache_file(&doc), without_cache_file(expected.trim_end()));
    assert!(doc.contains("\"state\": \"decided\""), "{}", doc);
}
