//! `hookjournal`: the binary. Everything is in the library (`cli/src/lib.rs`).
//!
//! Entered as the C `main`, not through Rust's runtime start (`#![no_main]`): every tool call of
//! every agent starts this binary, and that start-up found the main thread's stack guard by
//! reading and parsing `/proc/self/maps`, set up a signal stack and SIGSEGV/SIGBUS handlers (for
//! a stack overflow's message) and polled descriptors 0–2: 21 of an answering hook's ~200 system
//! calls, 6 page faults and ~110,000 instructions (issue 43). What of it the commands need is done
//! here: SIGPIPE ignored, as the runtime did (a write to a closed pipe is an error the hook
//! ignores; the other commands restore the default, `lib.rs`), and standard output flushed at the
//! end (`std::process::exit` does). The standard library is otherwise whole: on Linux it takes
//! the arguments and environment from the C library's start-up, not from the runtime's. A stack
//! overflow still ends the process (a bare SIGSEGV, not SIGABRT after a message).
//!
//! Under `cargo test` this file is the test harness's crate, whose `main` is the harness's own:
//! the C entry is left out there (else the test binary would run the CLI and exit 2).
#![cfg_attr(not(test), no_main)]

#[cfg(not(test))]
use std::process::ExitCode;

/// The process's entry (see the module's comment).
#[cfg(not(test))]
#[no_mangle]
pub extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    // SAFETY: before any thread is started; SIG_IGN is a valid disposition.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let code = hookjournal_cli::main();
    // `exit` flushes standard output (returning from here would not).
    std::process::exit(status(code))
}

/// The exit status an `ExitCode` stands for (`ExitCode` shows no number; every one the commands
/// give is made from a `u8`).
#[cfg(not(test))]
fn status(code: ExitCode) -> i32 {
    (0..=u8::MAX)
        .find(|&n| ExitCode::from(n) == code)
        .map_or(1, i32::from)
}
