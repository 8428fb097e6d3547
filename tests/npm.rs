//! `npx hookjournal`, as npm installs it: `npm/build.sh` packs the two packages with `npm pack` (the
//! native binary in `@hookjournal/linux-x64`, chosen by `os`/`cpu`; the launcher `hookjournal`,
//! which finds it through `optionalDependencies`), npm installs both from the tarballs into a
//! fresh prefix with the registry unreachable (`--offline`, a registry URL nothing answers), and
//! `npx hookjournal --version`, `demo` and `install` run from there. `install` must register the
//! native binary inside the package: a path that lasts, not npm's node launcher (which costs a
//! node start on every hook), nor a temporary path. The start times of `npx`, of the launcher and
//! of the binary itself are printed (`-- --nocapture`).
//!
//! Needs node and npm (`HOOKJOURNAL_REQUIRE_NPM=1` makes their absence a failure, as CI sets it).

mod common;
use common::harness::{missing, Ran};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hookjournal");
/// A registry URL nothing answers: any request npm made would fail.
const NO_REGISTRY: &str = "http://127.0.0.1:9/";

fn root_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The npm world of one test: a prefix, a cache, a home and a project, none under a temporary
/// directory (`install` rightly warns about paths there) — in the CI cache instead.
struct Npm {
    _root: tempfile::TempDir,
    root: PathBuf,
    prefix: PathBuf,
    home: PathBuf,
    project: PathBuf,
    path: std::ffi::OsString,
}

impl Npm {
    fn command(&self, program: &str, cwd: &Path) -> Command {
        let mut c = Command::new(program);
        c.current_dir(cwd)
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", &self.home)
            .env("NO_COLOR", "1")
            .env("NPM_CONFIG_PREFIX", &self.prefix)
            .env("NPM_CONFIG_CACHE", self.root.join("npm-cache"))
            .env("NPM_CONFIG_REGISTRY", NO_REGISTRY)
            .env("NPM_CONFIG_OFFLINE", "true")
            .env("NPM_CONFIG_UPDATE_NOTIFIER", "false")
            .env("NPM_CONFIG_FUND", "false")
            .env("NPM_CONFIG_AUDIT", "false")
            .stdin(Stdio::null());
        c
    }

    fn npx(&self, args: &[&str]) -> Output {
        self.command("npx", &self.project)
            .arg("--no-install")
            .arg("hookjournal")
            .args(args)
            .output()
            .expect("running npx")
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}\n--- stdout ---\n{}--- stderr ---\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn timed(mut run: impl FnMut() -> Output) -> Duration {
    let t = Instant::now();
    let out = run();
    let took = t.elapsed();
    assert!(out.status.success(), "{}", text(&out));
    took
}

fn npx_installs_offline_from_the_tarballs_and_registers_the_native_binary() -> Ran {
    let (Ok(npm), Ok(_)) = (which("npm"), which("node")) else {
        return missing("HOOKJOURNAL_REQUIRE_NPM", "node and npm are not on PATH");
    };
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return missing(
            "HOOKJOURNAL_REQUIRE_NPM",
            "npm/build.sh builds the linux-x64 package only",
        );
    }
    let parent = common::ci_cache()
        .expect("a home for the CI cache")
        .join("tests");
    fs::create_dir_all(&parent).unwrap();
    let dir = tempfile::Builder::new()
        .prefix("npm-")
        .tempdir_in(&parent)
        .unwrap();
    let root = dir.path().canonicalize().unwrap();
    let w = Npm {
        prefix: root.join("prefix"),
        home: root.join("home"),
        project: root.join("project"),
        path: {
            let mut p = std::ffi::OsString::from(root.join("prefix/bin"));
            p.push(":");
            p.push(common::test_path());
            p
        },
        root,
        _root: dir,
    };
    for d in [&w.home, &w.project.join(".git")] {
        fs::create_dir_all(d).unwrap();
    }
    println!("npm: {}", npm.display());

    // Pack both packages from this build's binary.
    let packs = w.root.join("packs");
    let built = Command::new("bash")
        .arg(root_dir().join("npm/build.sh"))
        .args(["--binary", BIN, "--out"])
        .arg(&packs)
        .output()
        .unwrap();
    assert!(built.status.success(), "npm/build.sh: {}", text(&built));
    let tarballs: Vec<PathBuf> = String::from_utf8(built.stdout)
        .unwrap()
        .lines()
        .map(PathBuf::from)
        .collect();
    assert_eq!(tarballs.len(), 2, "npm/build.sh printed {tarballs:?}");
    for t in &tarballs {
        println!(
            "packed {} ({:.1} MB)",
            t.display(),
            fs::metadata(t).unwrap().len() as f64 / 1e6
        );
    }
    check_manifests(&tarballs);

    // Install from the tarballs only: npm may not reach any registry.
    let installed = w
        .command("npm", &w.root)
        .args([
            "install",
            "--global",
            "--offline",
            "--registry",
            NO_REGISTRY,
        ])
        .args(&tarballs)
        .output()
        .unwrap();
    assert!(
        installed.status.success(),
        "npm install: {}",
        text(&installed)
    );
    let native = w
        .prefix
        .join("lib/node_modules/@hookjournal/linux-x64/bin/hookjournal");
    assert!(native.is_file(), "no native binary at {}", native.display());

    // --version: npx cold (its first run) and warm, the launcher, the binary itself.
    let want =
        String::from_utf8(Command::new(BIN).arg("--version").output().unwrap().stdout).unwrap();
    let first = Instant::now();
    let out = w.npx(&["--version"]);
    let cold = first.elapsed();
    assert!(
        out.status.success(),
        "npx hookjournal --version: {}",
        text(&out)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
    let warm = median((0..5).map(|_| timed(|| w.npx(&["--version"]))).collect());
    let launcher = w.prefix.join("bin/hookjournal");
    let through_launcher = median(
        (0..5)
            .map(|_| {
                timed(|| {
                    w.command(launcher.to_str().unwrap(), &w.project)
                        .arg("--version")
                        .output()
                        .unwrap()
                })
            })
            .collect(),
    );
    let direct = median(
        (0..5)
            .map(|_| {
                timed(|| {
                    w.command(native.to_str().unwrap(), &w.project)
                        .arg("--version")
                        .output()
                        .unwrap()
                })
            })
            .collect(),
    );
    println!(
        "start (--version, median of 5): npx cold {cold:.1?}, npx warm {warm:.1?}, node launcher {through_launcher:.1?}, native binary {direct:.1?}"
    );

    // demo: the bundled session through the real hook path.
    let out = w.npx(&["demo"]);
    assert!(out.status.success(), "npx hookjournal demo: {}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("── restore text injected at SessionStart(compact)"),
        "{}",
        text(&out)
    );

    // install: the native binary in the package, not the node launcher, with nothing to warn of.
    let out = w.npx(&["install"]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "npx hookjournal install: {}",
        text(&out)
    );
    let command = format!("\"{}\" hook --host claude", native.display());
    assert!(said.contains(&format!("Command: {command}\n")), "{said}");
    for unstable in ["build directory", "temporary directory", "npx's cache"] {
        assert!(!said.contains(unstable), "{said}");
    }
    let settings: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(w.project.join(".claude/settings.json")).unwrap())
            .unwrap();
    let registered: Vec<&str> = settings["hooks"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|groups| groups.as_array().unwrap())
        .flat_map(|g| g["hooks"].as_array().unwrap())
        .map(|h| h["command"].as_str().unwrap())
        .collect();
    assert_eq!(registered.len(), 31);
    assert!(registered.iter().all(|c| *c == command), "{registered:?}");

    // The registered command works as the agent runs it: one SessionStart, journaled.
    let mut hook = w
        .command("sh", &w.project)
        .arg("-c")
        .arg(&command)
        .env("CLAUDE_PROJECT_DIR", &w.project)
        .env("HOOKJOURNAL_DRAINER", "inline")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    hook.stdin
        .take()
        .unwrap()
        .write_all(br#"{"hook_event_name":"SessionStart","session_id":"npx-1","source":"startup","cwd":"/p"}"#)
        .unwrap();
    assert!(hook.wait_with_output().unwrap().status.success());
    let out = w.npx(&["status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("status --json ({e}): {}", text(&out)));
    assert_eq!(status["events"], 1, "{status}");
    Ok(())
}

/// The packages as npm will read them: no install script in either, the platform package limited
/// to its platform, the launcher depending on exactly its version.
fn check_manifests(tarballs: &[PathBuf]) {
    let manifest = |t: &Path| -> serde_json::Value {
        let out = Command::new("tar")
            .arg("-xzOf")
            .arg(t)
            .arg("package/package.json")
            .output()
            .unwrap();
        assert!(out.status.success(), "tar: {}", text(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let (platform, launcher) = (manifest(&tarballs[0]), manifest(&tarballs[1]));
    for m in [&platform, &launcher] {
        assert!(
            m.get("scripts").is_none(),
            "an npm package runs scripts: {m}"
        );
    }
    assert_eq!(platform["name"], "@hookjournal/linux-x64");
    assert_eq!(
        (platform["os"][0].as_str(), platform["cpu"][0].as_str()),
        (Some("linux"), Some("x64"))
    );
    assert!(
        platform.get("bin").is_none(),
        "the platform package puts nothing on PATH"
    );
    assert_eq!(launcher["name"], "hookjournal");
    assert_eq!(launcher["bin"]["hookjournal"], "bin/hookjournal.js");
    assert_eq!(
        launcher["optionalDependencies"]["@hookjournal/linux-x64"],
        platform["version"]
    );
    assert_eq!(launcher["version"], env!("CARGO_PKG_VERSION"));
    let size = fs::metadata(&tarballs[1]).unwrap().len();
    assert!(
        size < 20_000,
        "the launcher package is {size} bytes: it holds more than the launcher"
    );
}

fn which(name: &str) -> Result<PathBuf, ()> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}

harness_main!(npx_installs_offline_from_the_tarballs_and_registers_the_native_binary);
