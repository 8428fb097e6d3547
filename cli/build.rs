//! Links the `hookjournal` binary position-dependent (`-no-pie`) on Linux.
//!
//! Every tool call of every agent starts this binary. As a position-independent executable the
//! dynamic loader first applies ~27,000 relative relocations (panic locations, vtables, string
//! tables), writing every page of `.data.rel.ro` (0.5 MB): ~125 copy-on-write page faults and
//! ~0.4 ms of CPU before `main`, a third of the hook's own start-up (issue 43). Linked at a fixed
//! address those relocations are resolved by the linker and the pages are shared from the page
//! cache. The code stays position-independent; only the executable's own load address is no
//! longer randomized (the C library, the heap, the stack and every mapping still are), which
//! docs/architecture.md "Start-up" weighs. `HOOKJOURNAL_PIE=1` at build time keeps a PIE.
fn main() {
    println!("cargo:rerun-if-env-changed=HOOKJOURNAL_PIE");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let pie = std::env::var_os("HOOKJOURNAL_PIE").is_some_and(|v| v == "1");
    if os == "linux" && env == "gnu" && !pie {
        // After rustc's own `-pie`: the compiler driver takes the last of the two.
        println!("cargo:rustc-link-arg-bin=hookjournal=-no-pie");
    }
}
