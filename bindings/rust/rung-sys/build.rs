//! Finds librung_engine: RUNG_LIB_DIR, else the kit this crate lies in (an
//! installed kit's share/rung/rust/rung-sys holds `kit-lib-dir`, the way from
//! here to the kit's lib/), else pkg-config's libdir for rung-engine; fails
//! with a message saying how when none does.
//! Emits an rpath for this crate's own tests, and hands the directory to
//! dependents as DEP_RUNG_ENGINE_LIB_DIR (an rpath link-arg reaches only the
//! package whose build script emits it).

use std::env;
use std::path::Path;
use std::process::Command;

fn from_pkg_config() -> Result<String, String> {
    let output = Command::new("pkg-config")
        .args(["--variable=libdir", "rung-engine"])
        .output()
        .map_err(|e| format!("pkg-config could not be run ({})", e))?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr).trim().to_string();
        return Err(if said.is_empty() {
            "pkg-config does not know rung-engine".to_string()
        } else {
            format!("pkg-config does not know rung-engine ({})", said)
        });
    }
    let dir = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if dir.is_empty() {
        return Err("pkg-config gave rung-engine an empty libdir".to_string());
    }
    Ok(dir)
}

/// The kit's lib/ when this crate was installed with one (cmake --install writes kit-lib-dir).
fn from_kit() -> Option<String> {
    let here = env::var("CARGO_MANIFEST_DIR").ok()?;
    let relative = std::fs::read_to_string(Path::new(&here).join("kit-lib-dir")).ok()?;
    let dir = Path::new(&here).join(relative.trim());
    let dir = dir.canonicalize().unwrap_or(dir);
    Some(dir.to_string_lossy().into_owned())
}

fn main() {
    println!("cargo:rerun-if-env-changed=RUNG_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=kit-lib-dir");

    let dir = match env::var("RUNG_LIB_DIR") {
        Ok(dir) if !dir.is_empty() => dir,
        _ => match from_kit().map(Ok::<String, String>).unwrap_or_else(from_pkg_config) {
            Ok(dir) => dir,
            Err(why) => panic!(
                "rung-sys cannot find librung_engine: set RUNG_LIB_DIR to the directory holding \
                 librung_engine.so (a build tree's build/, or an install's lib/), or make \
                 `pkg-config --variable=libdir rung-engine` work (PKG_CONFIG_PATH=PREFIX/lib/pkgconfig); \
                 {}",
                why
            ),
        },
    };
    if !Path::new(&dir).join("librung_engine.so").exists() {
        panic!(
            "rung-sys: {} holds no librung_engine.so (build the rung_engine target, or install rung, \
             then point RUNG_LIB_DIR at its library directory)",
            dir
        );
    }
    println!("cargo:rustc-link-search=native={}", dir);
    println!("cargo:rustc-link-lib=dylib=rung_engine");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
    // Read by dependents' build scripts as DEP_RUNG_ENGINE_LIB_DIR.
    println!("cargo:lib_dir={}", dir);
}
