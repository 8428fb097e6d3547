//! The journal's directory is hostile ground: a cloned repository can commit files and links into
//! `.hookjournal/`, another user can pre-create it or write into it, root can run commands in a
//! user's project. Each attack is run against the real binary, and what it tried to reach is
//! checked afterwards. Tests that need a second Unix user create one (and remove it) where they
//! run as root; elsewhere the runner reports them ignored, with the reason, and with
//! `HOOKJOURNAL_REQUIRE_ROOT=1` (CI) a missing prerequisite is a failure.

mod common;

use common::*;
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

type Outcome = Result<Completion, Failed>;

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        Trial::ignorable_test(
            "links_planted_in_a_journal_are_never_followed",
            links_planted_in_a_journal_are_never_followed,
        ),
        Trial::ignorable_test(
            "special_files_as_control_files_are_refused_in_one_line",
            special_files_as_control_files_are_refused_in_one_line,
        ),
        Trial::ignorable_test(
            "a_spool_file_that_is_a_link_is_never_ingested",
            a_spool_file_that_is_a_link_is_never_ingested,
        ),
        Trial::ignorable_test(
            "spool_files_keep_their_order_when_the_clock_steps_back",
            spool_files_keep_their_order_when_the_clock_steps_back,
        ),
        Trial::ignorable_test(
            "a_spool_file_another_user_wrote_is_never_ingested",
            a_spool_file_another_user_wrote_is_never_ingested,
        ),
        Trial::ignorable_test(
            "a_journal_another_user_precreated_is_never_used",
            a_journal_another_user_precreated_is_never_used,
        ),
        Trial::ignorable_test(
            "root_reads_a_users_journal_and_leaves_only_the_users_files",
            root_reads_a_users_journal_and_leaves_only_the_users_files,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}

fn check(ok: bool, what: impl FnOnce() -> String) -> Result<(), Failed> {
    if ok {
        Ok(())
    } else {
        Err(what().into())
    }
}

fn payload(session: &str, name: &str, i: usize) -> String {
    match name {
        "PreToolUse" => format!(
            r#"{{"session_id":"{session}","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{{"file_path":"/src/{i}.rs"}},"tool_use_id":"t-{i}"}}"#
        ),
        _ => format!(
            r#"{{"session_id":"{session}","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":"echo {i}"}},"tool_response":{{"stdout":"{i}"}},"tool_use_id":"t-{i}"}}"#
        ),
    }
}

/// A journal with events in its log, its store, a hot cache and a spool file.
fn journal(root: &Path) -> PathBuf {
    let j = root.join("project").join(".hookjournal");
    std::fs::create_dir_all(j.parent().unwrap()).unwrap();
    for i in 0..5 {
        assert!(hook(&j, payload("s", "PostToolUse", i).as_bytes(), &[])
            .status
            .success());
    }
    assert!(hook(&j, payload("s", "PreToolUse", 5).as_bytes(), &[])
        .status
        .success());
    j
}

/// An outside file a planted link points at, and what it must still hold afterwards.
struct Victim {
    path: PathBuf,
    bytes: Vec<u8>,
    mode: u32,
}

impl Victim {
    fn new(dir: &Path, name: &str) -> Victim {
        let path = dir.join(name);
        let bytes = format!("the victim's {name}: not the journal's\n").into_bytes();
        std::fs::write(&path, &bytes).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        Victim {
            path,
            bytes,
            mode: 0o600,
        }
    }
    fn untouched(&self) -> Result<(), Failed> {
        let now = std::fs::read(&self.path).unwrap_or_default();
        let mode = std::fs::metadata(&self.path)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0);
        check(now == self.bytes && mode == self.mode, || {
            format!(
                "{} was changed through a link: {:?}, mode {mode:o}",
                self.path.display(),
                String::from_utf8_lossy(&now)
            )
        })
    }
}

/// Given links planted in place of the write-ahead log, its mirror, the hot cache's `HEAD`, the
/// markers a reader and a drainer write, and a whole directory, when hooks and commands run,
/// then no target outside the journal is read into it or written, and `verify` names every link.
fn links_planted_in_a_journal_are_never_followed() -> Outcome {
    let root = tempfile::tempdir().unwrap();
    let outside = root.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let j = journal(root.path());
    let wal = std::fs::read_dir(j.join("wal"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "wal"))
        .unwrap();
    let mut victims = Vec::new();
    for (n, (planted, name)) in [
        (wal.clone(), "log"),
        (wal.with_extension("mirror"), "mirror"),
        (j.join("hot").join("HEAD"), "head"),
        (j.join("lock.wanted"), "wanted"),
        (j.join("drain.running"), "running"),
        (j.join("state").join("REBUILDING"), "rebuilding"),
    ]
    .into_iter()
    .enumerate()
    {
        let v = Victim::new(&outside, &format!("{n}-{name}"));
        std::fs::create_dir_all(planted.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&planted);
        std::os::unix::fs::symlink(&v.path, &planted).unwrap();
        victims.push(v);
    }
    for i in 10..14 {
        let out = hook(&j, payload("s", "PostToolUse", i).as_bytes(), &[]);
        check(out.status.success(), || {
            format!("hook {i}: {:?}", out.status)
        })?;
    }
    let _ = cmd(&j).arg("status").output().unwrap();
    let _ = cmd(&j).arg("drain").output().unwrap();
    let (code, text) = {
        let o = cmd(&j).arg("verify").output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    for v in &victims {
        v.untouched()?;
    }
    check(code == Some(3), || format!("verify: {text}"))?;
    check(text.contains("a symbolic link"), || {
        format!("verify: {text}")
    })?;
    // `recover` replaces the links (never their targets) and keeps every event.
    let _ = cmd(&j).arg("recover").output().unwrap();
    for v in &victims {
        v.untouched()?;
    }

    // A directory of the journal replaced by a link: nothing is written through it.
    let spool_victim = outside.join("spool-dir");
    std::fs::create_dir_all(&spool_victim).unwrap();
    std::fs::remove_dir_all(j.join("spool")).ok();
    std::os::unix::fs::symlink(&spool_victim, j.join("spool")).unwrap();
    let out = hook(&j, payload("s", "PreToolUse", 20).as_bytes(), &[]);
    check(out.status.success(), || "a hook failed".into())?;
    let out = hook(&j, payload("s", "PostToolUse", 21).as_bytes(), &[]);
    check(out.status.success(), || "a hook failed".into())?;
    let written: Vec<_> = std::fs::read_dir(&spool_victim)
        .unwrap()
        .flatten()
        .collect();
    check(written.is_empty(), || {
        format!("{} files written through a linked spool/", written.len())
    })?;
    let said = String::from_utf8_lossy(&out.stderr);
    check(said.contains("symbolic link"), || {
        format!("the hook said: {said}")
    })?;
    Ok(Completion::Completed)
}

/// Given `CURRENT` replaced by a FIFO, a link to a secret, a huge file, and `config.toml` left
/// alone, when `status` runs, then it answers in one line within its budget, and never echoes
/// what the link points at.
fn special_files_as_control_files_are_refused_in_one_line() -> Outcome {
    let root = tempfile::tempdir().unwrap();
    let j = journal(root.path());
    let secret = root.path().join("id_ed25519");
    std::fs::write(
        &secret,
        "-----BEGIN OPENSSH PRIVATE KEY-----\nsecretsecret\n",
    )
    .unwrap();
    let current = j.join("CURRENT");
    let original = std::fs::read(&current).unwrap();
    let fifo_ok = Command::new("mkfifo")
        .arg(root.path().join("fifo"))
        .status();
    for how in ["fifo", "link", "huge"] {
        std::fs::remove_file(&current).unwrap();
        match how {
            "fifo" => {
                if !fifo_ok.as_ref().is_ok_and(|s| s.success()) {
                    continue;
                }
                std::fs::rename(root.path().join("fifo"), &current).unwrap();
            }
            "link" => std::os::unix::fs::symlink(&secret, &current).unwrap(),
            _ => std::fs::write(&current, vec![b'a'; 8 << 20]).unwrap(),
        }
        let mut child = cmd(&j)
            .arg("status")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The budget is generous; a FIFO read would block forever.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                return Err(format!("status hung on CURRENT as a {how}").into());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        check(!out.status.success(), || format!("{how}: status succeeded"))?;
        check(err.lines().count() == 1, || format!("{how}: {err}"))?;
        check(!err.contains("secret") && !err.contains("BEGIN"), || {
            format!("{how}: the secret was echoed: {err}")
        })?;
        std::fs::remove_file(&current).unwrap();
        std::fs::write(&current, &original).unwrap();
    }
    Ok(Completion::Completed)
}

/// Given a link in `spool/` pointing at a valid spool file elsewhere, when hooks drain the
/// spool, then the link is never ingested, and `verify` names it.
fn a_spool_file_that_is_a_link_is_never_ingested() -> Outcome {
    let root = tempfile::tempdir().unwrap();
    let j = journal(root.path());
    // A genuine spool file, made elsewhere by the real binary, then linked in.
    let other = root.path().join("elsewhere").join(".hookjournal");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    let forged = payload("forged", "PreToolUse", 99);
    assert!(hook(&other, forged.as_bytes(), &[]).status.success());
    let file = std::fs::read_dir(other.join("spool"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "spool"))
        .unwrap();
    std::os::unix::fs::symlink(&file, j.join("spool").join(file.file_name().unwrap())).unwrap();
    assert!(hook(&j, payload("s", "PostToolUse", 7).as_bytes(), &[])
        .status
        .success());
    let counts = payload_counts(&j);
    check(!counts.contains_key(forged.as_bytes()), || {
        "a linked spool file was ingested".into()
    })?;
    let o = cmd(&j).arg("verify").output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    check(
        o.status.code() == Some(3) && text.contains("a symbolic link"),
        || format!("verify: {text}"),
    )?;
    Ok(Completion::Completed)
}

/// Given the spool's shared clock ahead of the wall clock (as after the wall clock stepped
/// back), when record-only hooks spool, then their ids keep rising past it: arrival order holds.
fn spool_files_keep_their_order_when_the_clock_steps_back() -> Outcome {
    let root = tempfile::tempdir().unwrap();
    let j = journal(root.path());
    // Ingest what waits, so that only the new files are listed.
    let _ = cmd(&j).arg("drain").output().unwrap();
    let ahead: u64 = 4_000_000_000_000_000_000; // year 2096, in ns
    std::fs::write(j.join("spool.clock"), ahead.to_le_bytes()).unwrap();
    for i in 0..3 {
        assert!(
            hook(&j, payload("s", "PreToolUse", 100 + i).as_bytes(), &[])
                .status
                .success()
        );
    }
    let mut ids: Vec<String> = std::fs::read_dir(j.join("spool"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".spool")
                .map(String::from)
        })
        .collect();
    ids.sort();
    let stamps: Vec<u64> = ids
        .iter()
        .map(|id| id.split('-').next().unwrap().parse().unwrap())
        .collect();
    check(stamps == vec![ahead + 1, ahead + 2, ahead + 3], || {
        format!("spool ids {ids:?}")
    })?;
    // And they are ingested in that order.
    let order: Vec<String> = events(&j)
        .iter()
        .filter_map(|e| e["_line"].as_str().filter(|l| l.contains("/src/10")))
        .map(String::from)
        .collect();
    check(
        order.len() == 3
            && order[0].contains("/src/100")
            && order[1].contains("/src/101")
            && order[2].contains("/src/102"),
        || format!("ingested as {order:?}"),
    )?;
    Ok(Completion::Completed)
}

// ---- a second Unix user ----

/// A Unix user made for one test and removed after it.
struct OtherUser {
    name: String,
    uid: u32,
    gid: u32,
}

impl OtherUser {
    fn create() -> Result<OtherUser, String> {
        if journal::files::euid() != 0 {
            return Err("needs root, to create a second Unix user".into());
        }
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let name = format!(
            "hjt{}x{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let made = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
            ])
            .arg(&name)
            .stderr(Stdio::null())
            .status();
        if !made.is_ok_and(|s| s.success()) {
            return Err("useradd is missing or failed here".into());
        }
        let id = |flag: &str| -> u32 {
            let o = Command::new("id").arg(flag).arg(&name).output().unwrap();
            String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
        };
        Ok(OtherUser {
            uid: id("-u"),
            gid: id("-g"),
            name,
        })
    }

    /// `hookjournal ARGS` as this user.
    fn cmd(&self, journal: Option<&Path>) -> Command {
        let mut c = Command::new(BIN);
        if let Some(j) = journal {
            c.arg("--journal").arg(j);
        }
        c.uid(self.uid)
            .gid(self.gid)
            .env_remove("HOOKJOURNAL_DIR")
            .env_remove("CLAUDE_PROJECT_DIR")
            .env("HOME", "/nonexistent")
            .env("HOOKJOURNAL_DRAINER", "inline")
            .env("NO_COLOR", "1");
        c
    }

    fn hook(&self, journal: Option<&Path>, cwd: &Path, payload: &str) -> std::process::Output {
        use std::io::Write;
        let mut c = self.cmd(journal);
        c.arg("hook")
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }
}

impl Drop for OtherUser {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).status();
    }
}

fn second_user() -> Result<OtherUser, Outcome> {
    match OtherUser::create() {
        Ok(u) => Ok(u),
        Err(why) if std::env::var_os("HOOKJOURNAL_REQUIRE_ROOT").is_some() => Err(Err(format!(
            "HOOKJOURNAL_REQUIRE_ROOT is set, but {why}"
        )
        .into())),
        Err(why) => Err(Ok(Completion::ignored_with(why))),
    }
}

/// A temp directory every user can enter (the test's own are private).
fn shared_tempdir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

/// Given a valid spool file that another user wrote into a journal's `spool/` (a checksum is not
/// an author), when the owner's hooks drain the spool, then it is never ingested, its text
/// never reaches the restore, and `verify` names it.
fn a_spool_file_another_user_wrote_is_never_ingested() -> Outcome {
    let other = match second_user() {
        Ok(u) => u,
        Err(outcome) => return outcome,
    };
    let root = shared_tempdir();
    let j = journal(root.path());
    let elsewhere = root.path().join("elsewhere").join(".hookjournal");
    std::fs::create_dir_all(elsewhere.parent().unwrap()).unwrap();
    let forged = payload("s", "PreToolUse", 666);
    assert!(hook(&elsewhere, forged.as_bytes(), &[]).status.success());
    let file = std::fs::read_dir(elsewhere.join("spool"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "spool"))
        .unwrap();
    let planted = j.join("spool").join(file.file_name().unwrap());
    std::fs::copy(&file, &planted).unwrap();
    std::os::unix::fs::lchown(&planted, Some(other.uid), Some(other.gid)).unwrap();
    assert!(hook(&j, payload("s", "PostToolUse", 8).as_bytes(), &[])
        .status
        .success());
    check(!payload_counts(&j).contains_key(forged.as_bytes()), || {
        "another user's spool file was ingested".into()
    })?;
    let o = cmd(&j).arg("verify").output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    check(
        o.status.code() == Some(3) && text.contains("owned by another user"),
        || format!("verify: {text}"),
    )?;
    Ok(Completion::Completed)
}

/// Given another user who pre-created `.hookjournal/` (mode 0777) in a directory both share,
/// when this user's hook runs in a project below it, then nothing is written into that
/// directory, and this user's events go to a journal of their own.
fn a_journal_another_user_precreated_is_never_used() -> Outcome {
    let attacker = match second_user() {
        Ok(u) => u,
        Err(outcome) => return outcome,
    };
    let victim = match second_user() {
        Ok(u) => u,
        Err(outcome) => return outcome,
    };
    let root = shared_tempdir();
    let shared = root.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let planted = shared.join(".hookjournal");
    std::fs::create_dir(&planted).unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::os::unix::fs::lchown(&planted, Some(attacker.uid), Some(attacker.gid)).unwrap();
    let project = shared.join("project");
    std::fs::create_dir(&project).unwrap();
    std::os::unix::fs::lchown(&project, Some(victim.uid), Some(victim.gid)).unwrap();

    let out = victim.hook(None, &project, &payload("v", "PostToolUse", 1));
    check(out.status.success(), || format!("{:?}", out.status))?;
    let inside: Vec<_> = std::fs::read_dir(&planted).unwrap().flatten().collect();
    check(inside.is_empty(), || {
        format!(
            "{} files written into another user's directory",
            inside.len()
        )
    })?;
    let own = project.join(".hookjournal");
    let m = std::fs::metadata(&own).map_err(|e| format!("no journal of its own: {e}"))?;
    check(m.uid() == victim.uid && m.mode() & 0o077 == 0, || {
        format!("its journal: uid {} mode {:o}", m.uid(), m.mode())
    })?;

    // Told whose journal it is, never "no journal yet".
    let o = victim
        .cmd(Some(&planted))
        .arg("tasks")
        .arg("add")
        .arg("x")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    check(!o.status.success() && !err.contains("no journal"), || {
        format!("tasks add in another user's journal: {err}")
    })?;
    Ok(Completion::Completed)
}

/// Given a user's journal, when root runs read commands and a hook in it, then every file in
/// the journal still belongs to the user, root's event waits in the spool as the user's file,
/// and the user's next hook ingests it.
fn root_reads_a_users_journal_and_leaves_only_the_users_files() -> Outcome {
    let user = match second_user() {
        Ok(u) => u,
        Err(outcome) => return outcome,
    };
    let root_dir = shared_tempdir();
    let project = root_dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::os::unix::fs::lchown(&project, Some(user.uid), Some(user.gid)).unwrap();
    let j = project.join(".hookjournal");
    for i in 0..3 {
        let out = user.hook(Some(&j), &project, &payload("u", "PostToolUse", i));
        check(out.status.success(), || "the user's hook failed".into())?;
    }
    for args in [
        &["status"][..],
        &["sessions"],
        &["verify"],
        &["export", "--report", "events"],
    ] {
        let o = cmd(&j).args(args).output().unwrap();
        check(o.status.success(), || {
            format!("root's {args:?}: {}", String::from_utf8_lossy(&o.stderr))
        })?;
    }
    let as_root = payload("u", "PostToolUse", 50);
    let out = hook(&j, as_root.as_bytes(), &[]);
    check(out.status.success(), || "root's hook failed".into())?;
    let foreign: Vec<String> = walk(&j)
        .into_iter()
        .filter(|(_, uid)| *uid != user.uid)
        .map(|(p, uid)| format!("{} (uid {uid})", p.display()))
        .collect();
    check(foreign.is_empty(), || {
        format!("root left files the user does not own: {foreign:?}")
    })?;
    let out = user.hook(Some(&j), &project, &payload("u", "PostToolUse", 51));
    check(out.status.success(), || "the user's hook failed".into())?;
    let counts = payload_counts(&j);
    check(counts.get(as_root.as_bytes()) == Some(&1), || {
        "root's event was not ingested by the user's next hook".into()
    })?;
    Ok(Completion::Completed)
}

fn walk(dir: &Path) -> Vec<(PathBuf, u32)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let m = e.metadata().unwrap();
            if m.is_dir() {
                todo.push(e.path());
            }
            out.push((e.path(), m.uid()));
        }
    }
    out
}
