//! The two programs every row is timed beside: the previous release's binary, built by the
//! bench from the commit named in `bench/baseline` (cached outside the repository, reused when
//! present), and the C floor (`bench/floor.c`: read stdin, append, fsync), compiled with the
//! system `cc`. Neither is our current code, so neither moves when our own start-up does.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Where built programs are kept between runs: `$HOOKJOURNAL_CI_CACHE/bench` (CI caches that
/// folder), else `~/.cache/hookjournal-bench`, else the workspace's `target/`.
fn cache_root() -> PathBuf {
    if let Some(c) = std::env::var_os("HOOKJOURNAL_CI_CACHE") {
        return PathBuf::from(c).join("bench");
    }
    std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/hookjournal-bench"))
        .unwrap_or_else(|| repo().join("target/hookjournal-bench"))
}

/// The release commit the current build is compared with (`bench/baseline`, first word).
pub fn commit() -> String {
    let text = std::fs::read_to_string(repo().join("bench/baseline")).expect("bench/baseline");
    text.split_whitespace()
        .next()
        .expect("bench/baseline names a commit")
        .to_string()
}

/// The C floor, compiled once per source (its blake3 names the cached binary).
pub fn floor() -> Result<PathBuf, String> {
    let src = repo().join("bench/floor.c");
    let text = std::fs::read(&src).map_err(|e| format!("{}: {e}", src.display()))?;
    let dir = cache_root().join("floor");
    let out = dir.join(format!("floor-{}", &blake3::hash(&text).to_hex()[..16]));
    if out.exists() {
        return Ok(out);
    }
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let tmp = dir.join(format!(".floor.{}", std::process::id()));
    let st = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&tmp)
        .arg(&src)
        .status()
        .map_err(|e| format!("cc: {e}"))?;
    if !st.success() {
        return Err(format!("cc {} failed ({st})", src.display()));
    }
    std::fs::rename(&tmp, &out).map_err(|e| e.to_string())?;
    Ok(out)
}

/// The baseline's binary: `<cache>/<commit>/hookjournal`, built when missing from `git archive`
/// of the commit into `<cache>/<commit>/src` (its build folder removed afterwards: only the
/// binary is kept). `Err` says why it cannot be had here (no git history, a failed build).
pub fn binary() -> Result<PathBuf, String> {
    let commit = commit();
    let full = git(&["rev-parse", "--verify", &format!("{commit}^{{commit}}")])?;
    let dir = cache_root().join(&full[..12]);
    let bin = dir.join("hookjournal");
    if bin.exists() {
        return Ok(bin);
    }
    let t0 = std::time::Instant::now();
    eprintln!(
        "building the baseline {commit} into {} (once; reused by later runs)",
        dir.display()
    );
    let src = dir.join("src");
    let target = dir.join("target");
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src).map_err(|e| e.to_string())?;
    let mut archive = Command::new("git")
        .arg("-C")
        .arg(repo())
        .args(["archive", "--format=tar", &full])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("git archive: {e}"))?;
    let untar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(&src)
        .stdin(archive.stdout.take().unwrap())
        .status()
        .map_err(|e| format!("tar: {e}"))?;
    if !archive.wait().map_err(|e| e.to_string())?.success() || !untar.success() {
        return Err(format!("git archive {full} | tar -x failed"));
    }
    let st = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(&src)
        .args([
            "build",
            "--release",
            "--locked",
            "-p",
            "hookjournal",
            "--bin",
        ])
        .arg("hookjournal")
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !st.success() {
        return Err(format!("building the baseline {commit} failed ({st})"));
    }
    let tmp = dir.join(".hookjournal.tmp");
    std::fs::copy(target.join("release/hookjournal"), &tmp).map_err(|e| e.to_string())?;
    std::fs::rename(&tmp, &bin).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&target);
    let _ = std::fs::remove_dir_all(&src);
    eprintln!(
        "built the baseline {commit} in {:.0} s",
        t0.elapsed().as_secs_f64()
    );
    Ok(bin)
}

/// `git -C <repo> args`, its first line.
fn git(args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo())
        .args(args)
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if !out.status.success() {
        return Err(format!("git {} failed (no history here?)", args.join(" ")));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// This checkout's commit, `-dirty` when its tracked files differ from it.
pub fn head() -> String {
    let head = git(&["rev-parse", "--short=7", "HEAD"]).unwrap_or_else(|_| "unknown".into());
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
        .map(|s| !s.is_empty())
        .unwrap_or(false);
    if dirty {
        format!("{head}-dirty")
    } else {
        head
    }
}
