//! The durability model, through a real mount: given these writes, renames and syncs, when the
//! power is cut, then exactly this survives. Needs root and `/dev/fuse`; without them every
//! test is reported ignored with the reason, and `HOOKJOURNAL_REQUIRE_FUSE=1` (CI) makes that a
//! failure.

use hookjournal_crashfs::{boot, AfterCut, CrashFs, Injection, Names, Op, Options, Writeback};
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A mounted crash file system in a temp dir.
struct World {
    fs: CrashFs,
    root: PathBuf,
    _dir: tempfile::TempDir,
}

impl World {
    /// Requests after a cut fail with EIO here: the test itself is the process that goes on.
    fn new() -> World {
        World::with(Options::default().after_cut(AfterCut::Fail))
    }

    fn with(options: Options) -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("mnt");
        fs::create_dir(&root).unwrap();
        let fs = CrashFs::mount(&root, options).unwrap();
        World {
            fs,
            root,
            _dir: dir,
        }
    }

    fn p(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn write(&self, rel: &str, bytes: &[u8]) {
        fs::write(self.p(rel), bytes).unwrap();
    }

    fn append(&self, rel: &str, bytes: &[u8]) {
        let mut f = OpenOptions::new().append(true).open(self.p(rel)).unwrap();
        f.write_all(bytes).unwrap();
    }

    fn fsync(&self, rel: &str) {
        File::open(self.p(rel)).unwrap().sync_all().unwrap();
    }

    fn fsyncdir(&self, rel: &str) {
        File::open(self.p(rel)).unwrap().sync_all().unwrap();
    }

    /// Writes a file and makes it and its name durable.
    fn durable(&self, rel: &str, bytes: &[u8]) {
        self.write(rel, bytes);
        self.fsync(rel);
        let parent = Path::new(rel)
            .parent()
            .map_or(String::new(), |p| p.display().to_string());
        self.fsyncdir(&parent);
    }

    fn read(&self, rel: &str) -> Option<Vec<u8>> {
        fs::read(self.p(rel)).ok()
    }

    fn cut_and_reboot(&mut self) {
        self.fs.cut(Writeback::Nothing);
        self.fs.reboot().unwrap();
    }
}

fn check(ok: bool, what: impl FnOnce() -> String) -> Result<(), Failed> {
    if ok {
        Ok(())
    } else {
        Err(what().into())
    }
}

fn eq<T: PartialEq + std::fmt::Debug>(got: T, want: T, what: &str) -> Result<(), Failed> {
    check(got == want, || {
        format!("{what}: got {got:?}, want {want:?}")
    })
}

fn a_file_never_synced_is_gone() -> Result<(), Failed> {
    let mut w = World::new();
    w.write("a", b"hello");
    w.cut_and_reboot();
    eq(w.read("a"), None, "a")
}

fn a_synced_file_whose_directory_was_not_synced_is_gone() -> Result<(), Failed> {
    let mut w = World::new();
    w.write("a", b"hello");
    w.fsync("a");
    w.cut_and_reboot();
    eq(w.read("a"), None, "a")
}

fn with_immediate_names_a_synced_file_needs_no_directory_sync() -> Result<(), Failed> {
    let mut w = World::with(
        Options::default()
            .after_cut(AfterCut::Fail)
            .names(Names::Immediate),
    );
    w.write("a", b"hello");
    w.fsync("a");
    w.write("b", b"unsynced");
    w.cut_and_reboot();
    eq(w.read("a"), Some(b"hello".to_vec()), "a")?;
    eq(w.read("b"), Some(Vec::new()), "b, named but never synced")
}

fn a_durable_name_of_an_unsynced_file_names_an_empty_file() -> Result<(), Failed> {
    let mut w = World::new();
    w.write("a", b"hello");
    w.fsyncdir("");
    w.cut_and_reboot();
    eq(w.read("a"), Some(Vec::new()), "a")
}

fn a_file_and_its_directory_synced_survive_without_what_came_after() -> Result<(), Failed> {
    let mut w = World::new();
    w.durable("a", b"one");
    w.append("a", b"two");
    w.write("b", b"other");
    w.cut_and_reboot();
    eq(w.read("a"), Some(b"one".to_vec()), "a")?;
    eq(w.read("b"), None, "b")
}

fn an_unlink_not_followed_by_a_directory_sync_is_undone() -> Result<(), Failed> {
    let mut w = World::new();
    w.durable("a", b"kept");
    fs::remove_file(w.p("a")).unwrap();
    w.cut_and_reboot();
    eq(w.read("a"), Some(b"kept".to_vec()), "a")?;
    fs::remove_file(w.p("a")).unwrap();
    w.fsyncdir("");
    w.cut_and_reboot();
    eq(w.read("a"), None, "a after a synced unlink")
}

fn a_rename_over_a_file_is_durable_only_with_its_directory() -> Result<(), Failed> {
    let mut w = World::new();
    w.durable("CURRENT", b"old");
    w.write(".CURRENT.tmp", b"new");
    w.fsync(".CURRENT.tmp");
    fs::rename(w.p(".CURRENT.tmp"), w.p("CURRENT")).unwrap();
    w.cut_and_reboot();
    eq(
        w.read("CURRENT"),
        Some(b"old".to_vec()),
        "CURRENT without the directory sync",
    )?;
    eq(w.read(".CURRENT.tmp"), None, "the temp file")?;
    w.write(".CURRENT.tmp", b"new");
    w.fsync(".CURRENT.tmp");
    fs::rename(w.p(".CURRENT.tmp"), w.p("CURRENT")).unwrap();
    w.fsyncdir("");
    w.cut_and_reboot();
    eq(w.read("CURRENT"), Some(b"new".to_vec()), "CURRENT with it")
}

fn a_rename_between_directories_needs_both_synced() -> Result<(), Failed> {
    let mut w = World::new();
    fs::create_dir(w.p("d1")).unwrap();
    fs::create_dir(w.p("d2")).unwrap();
    w.fsyncdir("");
    w.durable("d1/f", b"moved");
    fs::rename(w.p("d1/f"), w.p("d2/f")).unwrap();
    // Only the source's removal is durable: the file has no durable name left.
    w.fsyncdir("d1");
    w.cut_and_reboot();
    eq(w.read("d1/f"), None, "d1/f")?;
    eq(w.read("d2/f"), None, "d2/f")?;
    w.durable("d1/f", b"moved");
    fs::rename(w.p("d1/f"), w.p("d2/f")).unwrap();
    w.fsyncdir("d1");
    w.fsyncdir("d2");
    w.cut_and_reboot();
    eq(w.read("d1/f"), None, "d1/f with both synced")?;
    eq(
        w.read("d2/f"),
        Some(b"moved".to_vec()),
        "d2/f with both synced",
    )
}

fn a_new_directory_needs_its_parent_synced() -> Result<(), Failed> {
    let mut w = World::new();
    fs::create_dir(w.p("wal")).unwrap();
    w.durable("wal/1.wal", b"record");
    w.cut_and_reboot();
    eq(w.p("wal").exists(), false, "wal/ without its parent synced")?;
    fs::create_dir(w.p("wal")).unwrap();
    w.fsyncdir("");
    w.durable("wal/1.wal", b"record");
    w.cut_and_reboot();
    eq(w.read("wal/1.wal"), Some(b"record".to_vec()), "wal/1.wal")
}

fn a_truncation_is_durable_only_when_synced() -> Result<(), Failed> {
    let mut w = World::new();
    w.durable("log", b"0123456789");
    OpenOptions::new()
        .write(true)
        .open(w.p("log"))
        .unwrap()
        .set_len(4)
        .unwrap();
    w.cut_and_reboot();
    eq(
        w.read("log"),
        Some(b"0123456789".to_vec()),
        "unsynced truncation",
    )?;
    let f = OpenOptions::new().write(true).open(w.p("log")).unwrap();
    f.set_len(4).unwrap();
    f.sync_data().unwrap();
    drop(f);
    w.cut_and_reboot();
    eq(w.read("log"), Some(b"0123".to_vec()), "synced truncation")
}

fn an_injection_cuts_right_after_the_nth_matching_operation() -> Result<(), Failed> {
    let mut w = World::new();
    fs::create_dir(w.p("spool")).unwrap();
    w.fsyncdir("");
    for i in 1..=3 {
        w.durable(&format!("spool/{i}.spool"), b"event");
    }
    w.fs.arm(Injection::new(Op::Unlink, "*/spool/*").nth(2));
    fs::remove_file(w.p("spool/1.spool")).unwrap();
    check(!w.fs.is_cut(), || "cut after the first unlink".into())?;
    fs::remove_file(w.p("spool/2.spool")).unwrap();
    let cut = w.fs.cut_info().ok_or("no cut after the second unlink")?;
    eq(cut.op, Some(Op::Unlink), "the cut's operation")?;
    eq(
        cut.path.as_deref(),
        Some("/spool/2.spool"),
        "the cut's path",
    )?;
    // The machine is off: nothing more happens to the disk (here: EIO).
    let synced = File::open(w.p("spool")).and_then(|d| d.sync_all());
    check(synced.is_err(), || {
        "a directory sync after the cut succeeded".into()
    })?;
    w.fs.reboot().unwrap();
    for i in 1..=3 {
        eq(
            w.read(&format!("spool/{i}.spool")),
            Some(b"event".to_vec()),
            "a spool file",
        )?;
    }
    Ok(())
}

fn a_sync_after_the_cut_makes_nothing_durable() -> Result<(), Failed> {
    let mut w = World::with(Options::default().after_cut(AfterCut::Continue));
    w.durable("log", b"a");
    w.fs.arm(Injection::new(Op::Write, "*/log"));
    w.append("log", b"b");
    w.fsync("log");
    eq(
        w.read("log"),
        Some(b"ab".to_vec()),
        "what processes see after the cut",
    )?;
    w.fs.reboot().unwrap();
    eq(w.read("log"), Some(b"a".to_vec()), "log")
}

fn a_process_that_needs_the_disk_after_the_cut_waits_until_it_is_killed() -> Result<(), Failed> {
    let mut w = World::with(Options::default());
    w.fs.arm(Injection::new(Op::Create, "*/f"));
    let script = format!("echo a > {0}/f && echo b > {0}/g", w.root.display());
    let mut child = std::process::Command::new("sh")
        .args(["-c", &script])
        .spawn()?;
    check(w.fs.wait_cut(Duration::from_secs(30)), || "no cut".into())?;
    // Its write to f is held: it cannot have exited, however long it is given.
    std::thread::sleep(Duration::from_millis(50));
    check(child.try_wait()?.is_none(), || {
        "it went on after the cut".into()
    })?;
    hookjournal_crashfs::procs::kill(&[child.id() as i32]);
    check(w.fs.release_held() >= 1, || "nothing was held".into())?;
    let status = child.wait()?;
    check(!status.success(), || "a killed process succeeded".into())?;
    w.fs.reboot().unwrap();
    eq(w.read("f"), None, "f")?;
    eq(w.read("g"), None, "g")
}

/// Background writeback at the cut, over many seeds: every outcome is one a disk could hold —
/// each page old (zeros) or new, or a prefix of its sectors new; the size old or new — and the
/// torn cases all happen.
fn writeback_persists_pages_whole_torn_or_not_and_sizes_without_data() -> Result<(), Failed> {
    let mut w = World::new();
    w.durable("log", b"");
    let new = vec![0xabu8; 3 * 4096];
    let (mut none, mut whole, mut zero_tail, mut torn) = (false, false, false, false);
    for seed in 0..64 {
        w.append("log", &new);
        w.fs.cut(Writeback::Random(seed));
        w.fs.reboot().unwrap();
        let got = w.read("log").ok_or("log vanished")?;
        check(got.is_empty() || got.len() == new.len(), || {
            format!(
                "seed {seed}: size {} is neither the old nor the new",
                got.len()
            )
        })?;
        for page in got.chunks(4096) {
            let written = page.iter().take_while(|&&b| b == 0xab).count();
            check(
                written % 512 == 0 && page[written..].iter().all(|&b| b == 0),
                || format!("seed {seed}: a page that is not a prefix of whole sectors"),
            )?;
            torn |= written > 0 && written < 4096;
            zero_tail |= written == 0;
        }
        none |= got.is_empty();
        whole |= got == new;
        // Back to an empty durable log.
        let f = OpenOptions::new().write(true).open(w.p("log")).unwrap();
        f.set_len(0).unwrap();
        f.sync_all().unwrap();
    }
    check(none && whole && zero_tail && torn, || {
        format!("outcomes seen: nothing {none}, whole {whole}, size without data {zero_tail}, torn {torn}")
    })
}

fn writeback_never_undoes_what_was_synced() -> Result<(), Failed> {
    let mut w = World::new();
    for seed in 0..16 {
        w.durable("a", b"synced");
        w.fs.cut(Writeback::Random(seed));
        w.fs.reboot().unwrap();
        eq(w.read("a"), Some(b"synced".to_vec()), "a")?;
    }
    Ok(())
}

fn operations_are_counted_per_kind_of_path() -> Result<(), Failed> {
    let w = World::with(
        Options::default()
            .after_cut(AfterCut::Fail)
            .kind("wal", "*/wal/*.wal")
            .kind("dirs", "*/wal"),
    );
    fs::create_dir(w.p("wal")).unwrap();
    w.write("wal/1.wal", b"x");
    w.append("wal/1.wal", b"y");
    w.fsync("wal/1.wal");
    w.fsyncdir("wal");
    w.write("other", b"z");
    let c = w.fs.counts();
    let n = |op: Op, kind: &str| c.get(&(op, kind.to_string())).copied().unwrap_or(0);
    eq(n(Op::Create, "wal"), 1, "creates in wal")?;
    eq(n(Op::Write, "wal"), 2, "writes in wal")?;
    eq(n(Op::Fsync, "wal"), 1, "fsyncs in wal")?;
    eq(n(Op::Fsyncdir, "dirs"), 1, "fsyncdirs of wal/")?;
    eq(n(Op::Mkdir, "dirs"), 1, "mkdirs of wal/")?;
    eq(n(Op::Create, "other"), 1, "other creates")
}

fn a_child_process_reads_the_new_boot_id() -> Result<(), Failed> {
    // In a thread of its own: the mount namespace is the thread's, and goes with it.
    std::thread::spawn(|| -> Result<(), String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        boot::private_mount_namespace().map_err(|e| format!("unshare: {e}"))?;
        let mut id = boot::BootId::bind(dir.path(), 42).map_err(|e| format!("bind: {e}"))?;
        let read = || -> Result<String, String> {
            let out = std::process::Command::new("cat")
                .arg(boot::BOOT_ID)
                .output()
                .map_err(|e| e.to_string())?;
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        };
        let first = read()?;
        let second = id.next_boot().map_err(|e| e.to_string())?;
        let seen = read()?;
        if first == second || seen != second || first.len() != 36 {
            return Err(format!(
                "boot ids: first {first}, next {second}, child read {seen}"
            ));
        }
        Ok(())
    })
    .join()
    .map_err(|_| Failed::from("the boot id thread panicked"))?
    .map_err(Failed::from)
}

type Test = fn() -> Result<(), Failed>;

/// `(name, test)` for each test function named.
macro_rules! tests {
    ($($t:ident),* $(,)?) => {
        vec![$((stringify!($t), $t as Test)),*]
    };
}

fn main() {
    let mut args = Arguments::from_args();
    // Mounts and a mount namespace per test: one at a time.
    args.test_threads = Some(1);
    let prerequisite = hookjournal_crashfs::available();
    let required = std::env::var("HOOKJOURNAL_REQUIRE_FUSE").is_ok_and(|v| v == "1");
    let tests = tests![
        a_file_never_synced_is_gone,
        a_synced_file_whose_directory_was_not_synced_is_gone,
        with_immediate_names_a_synced_file_needs_no_directory_sync,
        a_durable_name_of_an_unsynced_file_names_an_empty_file,
        a_file_and_its_directory_synced_survive_without_what_came_after,
        an_unlink_not_followed_by_a_directory_sync_is_undone,
        a_rename_over_a_file_is_durable_only_with_its_directory,
        a_rename_between_directories_needs_both_synced,
        a_new_directory_needs_its_parent_synced,
        a_truncation_is_durable_only_when_synced,
        an_injection_cuts_right_after_the_nth_matching_operation,
        a_sync_after_the_cut_makes_nothing_durable,
        a_process_that_needs_the_disk_after_the_cut_waits_until_it_is_killed,
        writeback_persists_pages_whole_torn_or_not_and_sizes_without_data,
        writeback_never_undoes_what_was_synced,
        operations_are_counted_per_kind_of_path,
        a_child_process_reads_the_new_boot_id,
    ];
    let trials = tests
        .into_iter()
        .map(|(name, test)| {
            let prerequisite = prerequisite.clone();
            Trial::ignorable_test(name, move || match prerequisite {
                Ok(()) => test().map(|()| Completion::Completed),
                Err(why) if required => Err(format!("HOOKJOURNAL_REQUIRE_FUSE=1 but {why}").into()),
                Err(why) => Ok(Completion::ignored_with(why)),
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
