//! Generates the protocol's message types and the BotService client from `proto/skyjo/v1/skyjo.proto`
//! (a copy of the repository's proto kept in sync by `gen-proto`; `tests/test_sdk_rust.py` checks it).
//!
//! protoc comes from the `protoc-bin-vendored` crate, so `cargo build` needs nothing but cargo on any
//! machine; `PROTOC=/path/to/protoc` overrides it.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::var_os("PROTOC").is_none() {
        // SAFETY: build scripts are single-threaded; nothing reads the environment concurrently.
        unsafe { std::env::set_var("PROTOC", protoc_bin_vendored::protoc_bin_path()?) };
    }
    println!("cargo:rerun-if-changed=proto/skyjo/v1/skyjo.proto");
    println!("cargo:rerun-if-env-changed=PROTOC");
    tonic_prost_build::configure()
        .build_server(false)
        .build_transport(false)
        .compile_protos(&["proto/skyjo/v1/skyjo.proto"], &["proto"])?;
    Ok(())
}
