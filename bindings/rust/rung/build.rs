//! An rpath to librung_engine for this crate's tests and examples, so they run
//! without LD_LIBRARY_PATH. rung-sys found the directory (RUNG_LIB_DIR, its kit
//! or pkg-config) and passes it on as DEP_RUNG_ENGINE_LIB_DIR: a link-arg from
//! rung-sys's own build script reaches only rung-sys's targets. The directory
//! goes on to an application's build script as DEP_RUNG_LIB_DIR (`links =
//! "rung"`), for the one line that gives its program the same rpath:
//!     println!("cargo:rustc-link-arg=-Wl,-rpath,{}", std::env::var("DEP_RUNG_LIB_DIR").unwrap());
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUNG_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    if let Ok(dir) = std::env::var("DEP_RUNG_ENGINE_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
        println!("cargo:lib_dir={}", dir);
    }
}
