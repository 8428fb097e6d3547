//! `hookjournal`: the binary. Everything is in the library (`cli/src/lib.rs`).

fn main() -> std::process::ExitCode {
    hookjournal_cli::main()
}
