//! `hookjournal`: the binary. Everything is in the library (`cli/src/lib.rs`).

// glibc's allocator serialises threads on its arena locks and returns large buffers to the
// kernel eagerly; an import's three threads spent a tenth of their time in it.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    hookjournal_cli::main()
}
