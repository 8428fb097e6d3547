//! The runner of the test targets whose tests need what a machine may lack (a real client,
//! ccusage, PostgreSQL, Chromium, root, `script`). Those targets set `harness = false` and end
//! with `harness_main!(test_a, test_b, …)`: libtest-mimic then reports a test whose prerequisite
//! is missing as `test x ... ignored (why)`, where libtest could only say `ok`.
//!
//! Each test runs in a child process of the test binary, so its output is shown only when it
//! fails, as libtest shows it (libtest-mimic captures nothing itself); `--nocapture` runs them in
//! the runner's own process instead, printing as they go. Names, filters (`cargo test --test
//! ship follow`), `--exact`, `--list` and `--ignored` work as with libtest.

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::process::{Command, Stdio};

/// Why a test could not run here (and what would let it).
#[derive(Debug)]
pub struct Skip(pub String);

/// What a test that may not be able to run returns: `Err(Skip)` when it could not run. (A test
/// that ran and failed panics, as any test does.)
pub type Ran = Result<(), Skip>;

/// A missing prerequisite: the test is skipped with `why`, or fails when the variable `require`
/// (e.g. `HOOKJOURNAL_REQUIRE_CLAUDE`) is `1`, as CI sets it.
pub fn missing<T>(require: &str, why: impl Into<String>) -> Result<T, Skip> {
    let why = why.into();
    if std::env::var(require).is_ok_and(|v| v == "1") {
        panic!("{require}=1, but {why}");
    }
    Err(Skip(why))
}

/// What a listed test function returns: `()` (it always runs) or `Ran`.
pub trait Outcome {
    fn ran(self) -> Ran;
}

impl Outcome for () {
    fn ran(self) -> Ran {
        Ok(())
    }
}

impl Outcome for Ran {
    fn ran(self) -> Ran {
        self
    }
}

/// One listed test.
pub struct Test {
    pub name: &'static str,
    pub run: fn() -> Ran,
    /// `#[ignore]` in the list: run only with `--ignored` / `--include-ignored`.
    pub ignored: bool,
}

/// The variable that makes the test binary run one test itself (the child process).
const CHILD: &str = "HOOKJOURNAL_TEST_CHILD";
/// The child's exit status for "skipped" (automake's).
const SKIPPED: i32 = 77;
const SKIP_LINE: &str = "hookjournal-test-skipped: ";

/// Lists the test functions of a `harness = false` target as its `main`; `#[ignore]` before a
/// name marks a test run only on request (a measurement, not a check).
#[macro_export]
macro_rules! harness_main {
    ($( $(#[$attr:ident])? $name:ident ),* $(,)?) => {
        fn main() {
            $crate::common::harness::main(
                file!(),
                vec![$($crate::common::harness::Test {
                    name: stringify!($name),
                    run: || $crate::common::harness::Outcome::ran($name()),
                    ignored: stringify!($($attr)?) == "ignore",
                }),*],
            )
        }
    };
}

/// Runs the listed tests as libtest would (see the module's comment).
pub fn main(source: &str, tests: Vec<Test>) {
    check_nothing_unlisted(source);
    if let Ok(name) = std::env::var(CHILD) {
        let test = tests
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no test named {name}"));
        // A failure panics out of here: the default hook prints it, the exit status is 101.
        if let Err(Skip(why)) = (test.run)() {
            eprintln!("{SKIP_LINE}{}", why.replace('\n', " "));
            std::process::exit(SKIPPED);
        }
        return;
    }
    let args = Arguments::from_args();
    let in_process = args.nocapture;
    let trials = tests
        .into_iter()
        .map(|t| {
            let Test { name, run, ignored } = t;
            Trial::ignorable_test(name, move || {
                if in_process {
                    Ok(match run() {
                        Ok(()) => Completion::Completed,
                        Err(Skip(why)) => Completion::ignored_with(why),
                    })
                } else {
                    run_child(name)
                }
            })
            .with_ignored_flag(ignored)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

/// Runs test `name` in a child process of this binary, its output captured.
fn run_child(name: &str) -> Result<Completion, Failed> {
    let exe = std::env::current_exe().map_err(|e| format!("finding the test binary: {e}"))?;
    let out = Command::new(exe)
        .env(CHILD, name)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running the test in a child process: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => Ok(Completion::Completed),
        Some(SKIPPED) => {
            let why = stderr
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix(SKIP_LINE))
                .unwrap_or("skipped");
            Ok(Completion::ignored_with(why))
        }
        _ => Err(format!(
            "{}\n---- stdout ----\n{}---- stderr ----\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            stderr
        )
        .into()),
    }
}

/// A `#[test]` in a `harness = false` target is compiled out, silently: refuse to run with one.
fn check_nothing_unlisted(source: &str) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let Ok(text) = std::fs::read_to_string(root.join(source)) else {
        return;
    };
    if let Some(n) = text.lines().position(|l| l.trim() == "#[test]") {
        panic!(
            "{source}:{}: #[test] in a harness = false target never runs; \
             list the function in harness_main! instead",
            n + 1
        );
    }
}
