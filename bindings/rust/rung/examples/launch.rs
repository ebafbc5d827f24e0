//! What an application does at launch, in Rust: start rung's engine on the
//! PP-OCR angle classifier, say what it is doing, wait a bounded time for the
//! probe, then run the classifier on one crop.
//!
//!   cargo run --example launch -- [CLASSIFIER.onnx [INPUT.bin]] [KEY=VALUE...]
//!
//! INPUT.bin holds the classifier's input, 1 x 3 x 48 x 192 float32 values, raw
//! little-endian. Each KEY=VALUE is an engine option (rung.h lists them). What
//! the arguments leave out comes from the environment ctest sets:
//! RUNG_TEST_MODEL, RUNG_TEST_REFERENCE_DIR/input.bin, and the options
//! plugin_dir, runtime_dir, worker and hardware_root from RUNG_TEST_PLUGIN_DIR,
//! RUNG_TEST_RUNTIME_DIR, RUNG_TEST_WORKER and RUNG_TEST_HARDWARE_ROOT;
//! cache_dir from RUNG_CACHE_DIR, else a fresh private directory removed at
//! exit (an application keeps one cache directory across launches: that is
//! what makes its second launch warm).
//! Exits with the code rung's CLI gives for the failure (2 bad input, 3 no
//! runtime, 1 otherwise).

use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rung::{Engine, Error, ErrorCode, Options, Role, Value};

/// The classifier's input, as the OCR pipeline preprocesses a crop.
const SHAPE: [i64; 4] = [1, 3, 48, 192];
/// How long launch waits for the probe before running on what has landed.
const WAIT: Duration = Duration::from_secs(300);

fn usage(why: &str) -> Error {
    Error::new(
        ErrorCode::InvalidArgument,
        format!("{}\nusage: launch [CLASSIFIER.onnx [INPUT.bin]] [KEY=VALUE...]", why),
    )
}

/// A new directory only this user can enter, for the engine's cache; one
/// already there (someone else's, perhaps) is never reused.
fn private_dir() -> Result<PathBuf, Error> {
    let base = std::env::temp_dir();
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let mut last = None;
    for attempt in 0..16u32 {
        let dir = base.join(format!("rung-launch-{}-{:08x}", std::process::id(), nanos.wrapping_add(attempt)));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) => last = Some(e),
        }
    }
    Err(Error::new(
        ErrorCode::Io,
        format!(
            "cannot make a cache directory under {}: {}",
            base.display(),
            last.map(|e| e.to_string()).unwrap_or_default()
        ),
    ))
}

fn run(cache: &mut Option<PathBuf>) -> Result<(), Error> {
    let mut paths = Vec::new();
    let mut settings = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.split_once('=') {
            Some((key, value)) => settings.push((key.to_string(), value.to_string())),
            None => paths.push(PathBuf::from(arg)),
        }
    }
    let from_env = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from);
    let mut paths = paths.into_iter();
    let model = paths
        .next()
        .or_else(|| from_env("RUNG_TEST_MODEL"))
        .ok_or_else(|| usage("no classifier: give its path or set RUNG_TEST_MODEL"))?;
    let input_file = paths
        .next()
        .or_else(|| from_env("RUNG_TEST_REFERENCE_DIR").map(|d| d.join("input.bin")))
        .ok_or_else(|| usage("no input: give INPUT.bin or set RUNG_TEST_REFERENCE_DIR"))?;
    if paths.next().is_some() {
        return Err(usage("too many paths"));
    }

    let bytes = std::fs::read(&input_file)
        .map_err(|e| Error::new(ErrorCode::Io, format!("cannot read {}: {}", input_file.display(), e)))?;
    let count = SHAPE.iter().product::<i64>() as usize;
    if bytes.len() != count * 4 {
        return Err(usage(&format!("{} does not hold 1 x 3 x 48 x 192 float32 values", input_file.display())));
    }
    let pixels: Vec<f32> = bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();

    let mut options = Options::new()?;
    if !settings.iter().any(|(k, _)| k == "cache_dir") {
        let dir = match from_env("RUNG_CACHE_DIR") {
            Some(dir) => dir,
            None => {
                let dir = private_dir()?;
                *cache = Some(dir.clone()); // removed at exit
                dir
            }
        };
        options = options.set("cache_dir", dir)?;
    }
    for (key, var) in [
        ("plugin_dir", "RUNG_TEST_PLUGIN_DIR"),
        ("runtime_dir", "RUNG_TEST_RUNTIME_DIR"),
        ("worker", "RUNG_TEST_WORKER"),
        ("hardware_root", "RUNG_TEST_HARDWARE_ROOT"),
    ] {
        if let Some(value) = from_env(var) {
            options = options.set(key, value)?;
        }
    }
    for (key, value) in &settings {
        options = options.set(key, value)?;
    }
    let options = options.add_model("ppocr_cls", &model, Role::Generic)?.on_progress(|p| {
        if !p.line.is_empty() {
            eprintln!("launch: {}", p.line);
        }
    });

    let engine = Engine::start(options)?;
    println!("about: {}", engine.about_line());
    if engine.wait_until_settled(Some(WAIT)) {
        println!("settled on {}: {}", engine.chosen_rung(), engine.chosen_reason());
    } else {
        // An application goes on: jobs run on what has landed.
        println!(
            "not settled after {}s ({}); running on {}",
            WAIT.as_secs(),
            engine.progress_line(),
            engine.chosen_rung()
        );
    }

    let job = engine.open_job()?;
    let session = job.session("ppocr_cls")?;
    let declared = session.inputs()?;
    let input_name =
        declared.first().map(|io| io.name.clone()).ok_or_else(|| usage("the classifier declares no input"))?;
    let outputs = session.run(&[Value::view(&input_name, &pixels, &SHAPE)?])?;
    println!("rung: {}", session.rung());
    println!("model id: {}", session.model_id());
    let ids: Vec<String> = job.model_ids()?.iter().map(|(name, id)| format!("{}={}", name, id)).collect();
    println!("model ids: {}", ids.join(" "));
    for out in &outputs {
        let values = out
            .as_slice::<f32>()
            .map(|v| format!("{:?}", v))
            .unwrap_or_else(|_| format!("{} bytes", out.bytes().len()));
        println!("output {} {} {:?} {}", out.name(), out.element_type(), out.shape(), values);
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut cache = None;
    let result = run(&mut cache);
    if let Some(dir) = cache {
        let _ = std::fs::remove_dir_all(dir);
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("launch: {}", e);
            ExitCode::from(e.exit_code().clamp(1, 255) as u8)
        }
    }
}
