//! ccusage, the peer the cost figures are compared with (pinned by `.ci/install-ccusage.sh`):
//! where it is, and its per-session report for a host over a test's home.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The version `.ci/install-ccusage.sh` pins.
pub const VERSION: &str = "20.0.24";

/// `HOOKJOURNAL_CCUSAGE_BIN`, else the pinned one in the CI cache, when it is there.
pub fn bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HOOKJOURNAL_CCUSAGE_BIN") {
        return Some(PathBuf::from(p));
    }
    let bin = super::ci_cache()?.join(format!(
        "ccusage-{VERSION}/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage"
    ));
    bin.exists().then_some(bin)
}

/// ccusage's binary, or the comparison's outcome without it: ignored with its reason, or failed
/// under `HOOKJOURNAL_REQUIRE_CCUSAGE=1` (CI installs it).
pub fn required() -> Result<PathBuf, Result<libtest_mimic::Completion, libtest_mimic::Failed>> {
    bin().ok_or_else(|| {
        let why = format!("ccusage {VERSION} is not installed (bash .ci/install-ccusage.sh)");
        if std::env::var("HOOKJOURNAL_REQUIRE_CCUSAGE").is_ok_and(|v| v == "1") {
            return Err(format!("HOOKJOURNAL_REQUIRE_CCUSAGE=1, but {why}").into());
        }
        Ok(libtest_mimic::Completion::ignored_with(why))
    })
}

/// `ccusage HOST session --offline --json` with `home` as HOME: the session `sid` of its report,
/// or `Err` saying the report has none.
pub fn session(bin: &Path, host: &str, home: &Path, sid: &str) -> Result<Value, String> {
    let out = Command::new(bin)
        .args([host, "session", "--offline", "--json"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "ccusage {host} session printed no JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    report["sessions"]
        .as_array()
        .and_then(|s| s.iter().find(|x| x["sessionId"] == sid))
        .cloned()
        .ok_or_else(|| format!("ccusage has no session {sid}: {report}"))
}

/// `ccusage ARGS…` in a cleared environment (`PATH`, `NO_COLOR` and `env`): its JSON report.
/// Fails the test, naming `what`, when it exits badly or prints no JSON.
pub fn report(bin: &Path, args: &[&str], env: &[(&str, &std::ffi::OsStr)], what: &str) -> Value {
    let out = Command::new(bin)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env.iter().copied())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ccusage {what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "ccusage {what} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}
