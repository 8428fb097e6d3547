//! Which `hookjournal` path `install` writes into a host's settings: one that stays valid. A host
//! runs that path on every hook event for as long as the settings say it, so a binary in a build
//! directory (`cargo run -- install`: gone at the next `cargo clean`, replaced by a build
//! elsewhere), a temporary directory or npx's cache is written only with a note saying so and
//! naming the stable alternative. The `hookjournal` on `PATH` is preferred when it is the same
//! program as the one running.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The program `install` registers, and what the user should know about where it lives.
#[derive(Debug, PartialEq, Eq)]
pub struct Program {
    /// The absolute path written into the command.
    pub path: PathBuf,
    /// One line each, printed as `Note: …`.
    pub notes: Vec<String>,
}

/// Where a binary lives, as far as its path lasting is concerned.
#[derive(Debug, PartialEq, Eq)]
pub enum Place {
    /// Somewhere the user put it (`~/.cargo/bin`, `/usr/local/bin`, an npm install's package).
    Stable,
    /// Under a cargo build directory (the directory holding its `CACHEDIR.TAG`).
    Build(PathBuf),
    /// Under a temporary directory.
    Temp(PathBuf),
    /// In npx's cache of packages run without installing them (`~/.npm/_npx/…`).
    NpxCache,
}

/// The program for the running binary, from the real environment.
pub fn for_this_binary() -> anyhow::Result<Program> {
    use anyhow::Context;
    let exe = std::env::current_exe().context("finding the running hookjournal binary")?;
    let path_var = std::env::var_os("PATH");
    let on_path = find_on_path(path_var.as_deref());
    Ok(choose(&exe, on_path.as_deref(), &temp_dirs(), &|p| {
        version_of(p)
    }))
}

/// The program to register: the one on `PATH` when it is this program (the same file, or a native
/// binary of the same version), else this binary; with a note when that path will not last.
/// `version` runs a binary's `--version` (a parameter for the tests).
pub fn choose(
    exe: &Path,
    on_path: Option<&Path>,
    temp: &[PathBuf],
    version: &dyn Fn(&Path) -> Option<String>,
) -> Program {
    let ours = format!("hookjournal {}", env!("CARGO_PKG_VERSION"));
    let mut other_on_path = None;
    if let Some(p) = on_path {
        let same_file = same_file(p, exe);
        if same_file || (is_native(p) && version(p).as_deref() == Some(ours.as_str())) {
            let mut program = with_notes(p.to_path_buf(), place(p, temp), None);
            if !same_file && place(exe, temp) != Place::Stable {
                // Said so that a reader of the settings knows why they do not name the binary run.
                program.notes.insert(
                    0,
                    format!(
                        "{} is the hookjournal on your PATH and the same version as {}; it is registered instead, being the one that lasts.",
                        p.display(),
                        exe.display()
                    ),
                );
            }
            return program;
        }
        other_on_path = Some(match version(p) {
            Some(v) if is_native(p) => format!("{} on your PATH is {v}", p.display()),
            _ => format!("{} on your PATH is not this program", p.display()),
        });
    }
    with_notes(exe.to_path_buf(), place(exe, temp), other_on_path)
}

fn with_notes(path: PathBuf, place: Place, other_on_path: Option<String>) -> Program {
    let shown = path.display().to_string();
    let other = other_on_path.map(|o| format!(" ({o})")).unwrap_or_default();
    let note = match place {
        Place::Stable => None,
        Place::Build(dir) => Some(format!(
            "{shown} is in a build directory ({}): every hook fails once it is cleaned or rebuilt elsewhere. For a command that lasts, install the binary (`cargo install --locked --path cli` in a checkout, or `cargo install hookjournal`) and run `hookjournal install` again{other}.",
            dir.display()
        )),
        Place::Temp(dir) => Some(format!(
            "{shown} is in a temporary directory ({}): every hook fails once it is cleaned. For a command that lasts, install hookjournal (`cargo install hookjournal`, or `npm install -g hookjournal`) and run `hookjournal install` again{other}.",
            dir.display()
        )),
        Place::NpxCache => Some(format!(
            "{shown} is in npx's cache, which npm may clear: every hook fails then. For a command that lasts, `npm install -g hookjournal` and run `hookjournal install` again{other}."
        )),
    };
    Program {
        path,
        notes: note.into_iter().collect(),
    }
}

/// Where `path` lives (see `Place`); `temp` are the temporary directories.
pub fn place(path: &Path, temp: &[PathBuf]) -> Place {
    let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    for p in [path, real.as_path()] {
        if p.components().any(|c| c.as_os_str() == "_npx") {
            return Place::NpxCache;
        }
    }
    for dir in real.ancestors().skip(1) {
        if is_cargo_target_dir(dir) {
            return Place::Build(dir.to_path_buf());
        }
    }
    for t in temp {
        let t = t.canonicalize().unwrap_or_else(|_| t.clone());
        if real.starts_with(&t) && t != Path::new("/") {
            return Place::Temp(t);
        }
    }
    Place::Stable
}

/// Cargo marks its target directory with a `CACHEDIR.TAG` (the cache-directory standard).
fn is_cargo_target_dir(dir: &Path) -> bool {
    let tag = engine::fs::door::read_following(&dir.join("CACHEDIR.TAG"), 4096);
    tag.ok().flatten().is_some_and(|t| {
        t.starts_with(b"Signature: 8a477f597d28d172789f06886806bc55")
            && (dir.join(".rustc_info.json").exists()
                || dir.join("debug").is_dir()
                || dir.join("release").is_dir())
    })
}

/// The temporary directories: `$TMPDIR` (or the system's), `/tmp`, `/var/tmp`, `/dev/shm`.
pub fn temp_dirs() -> Vec<PathBuf> {
    let mut out = vec![std::env::temp_dir()];
    out.extend(["/tmp", "/var/tmp", "/dev/shm"].map(PathBuf::from));
    out
}

/// The first `hookjournal` on `PATH`'s absolute entries that is an executable file
/// (`engine::fs::door::find_program`, which the hook's `git` is found with too).
pub fn find_on_path(path_var: Option<&OsStr>) -> Option<PathBuf> {
    engine::fs::door::find_program("hookjournal", path_var)
}

fn same_file(a: &Path, b: &Path) -> bool {
    use engine::fs::door::identity;
    matches!((identity(a), identity(b)), (Ok(x), Ok(y)) if x == y)
}

/// A native executable (ELF), not a script: npm's `hookjournal` on PATH is the node launcher,
/// which costs a node start on every hook.
pub fn is_native(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    engine::fs::door::open_following(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == *b"\x7fELF"
}

pub use engine::registration::version_of;

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const ELF: &[u8] = b"\x7fELF fake";

    fn exe(dir: &Path, rel: &str, bytes: &[u8]) -> PathBuf {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn cargo_target(dir: &Path) {
        std::fs::create_dir_all(dir.join("release")).unwrap();
        std::fs::write(
            dir.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by cargo.\n",
        )
        .unwrap();
    }

    fn ours() -> Option<String> {
        Some(format!("hookjournal {}", env!("CARGO_PKG_VERSION")))
    }

    #[test]
    fn a_build_directory_binary_is_registered_with_a_note_naming_the_stable_alternative() {
        let d = tempfile::tempdir().unwrap();
        cargo_target(&d.path().join("target"));
        let built = exe(d.path(), "target/release/hookjournal", ELF);
        let p = choose(&built, None, &[], &|_| ours());
        assert_eq!(p.path, built);
        assert_eq!(p.notes.len(), 1);
        assert!(
            p.notes[0].contains("is in a build directory"),
            "{:?}",
            p.notes
        );
        assert!(p.notes[0].contains("cargo install"), "{:?}", p.notes);
    }

    #[test]
    fn the_same_program_on_path_is_preferred_and_another_version_is_named() {
        let d = tempfile::tempdir().unwrap();
        cargo_target(&d.path().join("target"));
        let built = exe(d.path(), "target/release/hookjournal", ELF);
        let installed = exe(d.path(), "home/.cargo/bin/hookjournal", ELF);
        let p = choose(&built, Some(&installed), &[], &|_| ours());
        assert_eq!(p.path, installed);
        assert_eq!(p.notes.len(), 1, "{:?}", p.notes);
        assert!(p.notes[0].contains("same version"), "{:?}", p.notes);

        let old = |_: &Path| Some("hookjournal 0.0.1".to_string());
        let p = choose(&built, Some(&installed), &[], &old);
        assert_eq!(p.path, built);
        assert!(
            p.notes[0].contains("on your PATH is hookjournal 0.0.1"),
            "{:?}",
            p.notes
        );

        // npm's launcher on PATH is a script: never registered, whatever it says.
        let launcher = exe(d.path(), "npm/bin/hookjournal", b"#!/usr/bin/env node\n");
        let p = choose(&built, Some(&launcher), &[], &|_| ours());
        assert_eq!(p.path, built);
        assert!(p.notes[0].contains("is not this program"), "{:?}", p.notes);
    }

    #[test]
    fn the_running_binary_found_on_path_needs_no_note() {
        let d = tempfile::tempdir().unwrap();
        let installed = exe(d.path(), "bin/hookjournal", ELF);
        let p = choose(&installed, Some(&installed), &[], &|_| None);
        assert_eq!((p.path, p.notes), (installed, vec![]));
    }

    #[test]
    fn temporary_directories_and_npx_cache_are_named() {
        let d = tempfile::tempdir().unwrap();
        let t = exe(d.path(), "tmp/x/hookjournal", ELF);
        let p = choose(&t, None, &[d.path().join("tmp")], &|_| None);
        assert!(
            p.notes[0].contains("is in a temporary directory"),
            "{:?}",
            p.notes
        );
        let npx = exe(
            d.path(),
            "home/.npm/_npx/1a2b/node_modules/@hookjournal/linux-x64/bin/hookjournal",
            ELF,
        );
        let p = choose(&npx, None, &[], &|_| None);
        assert!(p.notes[0].contains("npx's cache"), "{:?}", p.notes);
        assert!(
            p.notes[0].contains("npm install -g hookjournal"),
            "{:?}",
            p.notes
        );
        let global = exe(
            d.path(),
            "prefix/lib/node_modules/@hookjournal/linux-x64/bin/hookjournal",
            ELF,
        );
        assert_eq!(place(&global, &[]), Place::Stable);
    }

    #[test]
    fn path_lookup_skips_what_is_not_an_executable_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("a/hookjournal")).unwrap();
        std::fs::create_dir_all(d.path().join("b")).unwrap();
        std::fs::write(d.path().join("b/hookjournal"), "x").unwrap();
        let c = exe(d.path(), "c/hookjournal", ELF);
        let var = std::env::join_paths(["a", "b", "c"].map(|x| d.path().join(x))).unwrap();
        assert_eq!(find_on_path(Some(&var)), Some(c));
    }
}
