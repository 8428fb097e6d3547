//! A file system that forgets, at a simulated power cut, everything that was not made durable —
//! by the strict POSIX rules, not by what ext4 happens to do — so tests can prove that a program
//! acknowledges nothing it could lose.
//!
//! [`CrashFs::mount`] serves an in-memory file system over FUSE from a thread of the calling
//! process; the test drives it directly through this API (no control files, no sockets):
//!
//! * it keeps two states, *current* (what processes see) and *durable* (what a power cut
//!   leaves): a file's data becomes durable when the file is fsynced, a name when its directory
//!   is fsynced after the change (see [`model`] for the rules);
//! * [`CrashFs::cut`] cuts the power now; [`CrashFs::arm`] cuts it right after the n-th
//!   operation of a kind on a path matching a glob ([`pattern`]): an *injection point*, e.g.
//!   right after the first unlink in `*/spool/*`. A [`Writeback::Random`] cut also makes a
//!   seeded choice of the unsynced changes durable, torn pages included, as an operating
//!   system's writeback would;
//! * after a cut, requests that would change the disk are not answered ([`AfterCut::Hang`]): the
//!   machine is off. A process that exited before it needed the disk again had done all its
//!   writing before the cut; the others are killed by the test ([`procs`]);
//! * [`CrashFs::reboot`] unmounts, makes what processes see what the disk held at the cut, and
//!   mounts again; [`boot::BootId`] gives the new boot a new `/proc/sys/kernel/random/boot_id`;
//! * [`CrashFs::counts`] says how often each operation ran per kind of path, so a test can show
//!   that every injection point was reached.
//!
//! It needs root and `/dev/fuse` ([`available`]); the mount is the `mount(2)` syscall itself, so
//! no libfuse is linked and no `fusermount3` is needed.
//!
//! ```no_run
//! use hookjournal_crashfs::{CrashFs, Injection, Op, Options, Writeback};
//! let mut fs = CrashFs::mount("/tmp/mnt".as_ref(), Options::default())?;
//! fs.arm(Injection::new(Op::Rename, "*/CURRENT").writeback(Writeback::Nothing));
//! // … run the program against /tmp/mnt, kill what still runs once `fs.is_cut()` …
//! fs.reboot()?; // /tmp/mnt now holds what survived
//! # Ok::<(), std::io::Error>(())
//! ```
#![deny(missing_docs)]

pub mod boot;
mod fs;
pub mod model;
pub mod pattern;
pub mod procs;

pub use model::{Names, Writeback};
pub use pattern::Pattern;

use std::any::Any;
use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A file-system operation, as counted and as an injection point names it. Only operations
/// that change the disk or make something durable are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    /// A new file (`create`, `mknod`).
    Create,
    /// A new directory.
    Mkdir,
    /// A new symlink.
    Symlink,
    /// A new name for a file.
    Link,
    /// A file's name removed.
    Unlink,
    /// A directory removed.
    Rmdir,
    /// A rename; it matches a pattern by its source or its destination.
    Rename,
    /// One write request (a large `write(2)` may be several).
    Write,
    /// A size change (`truncate`, `O_TRUNC`).
    Truncate,
    /// Any other attribute change (mode, owner, times).
    Setattr,
    /// `fsync` or `fdatasync` of a file.
    Fsync,
    /// `fsync` of a directory.
    Fsyncdir,
}

impl Op {
    /// Every operation.
    pub const ALL: [Op; 12] = [
        Op::Create,
        Op::Mkdir,
        Op::Symlink,
        Op::Link,
        Op::Unlink,
        Op::Rmdir,
        Op::Rename,
        Op::Write,
        Op::Truncate,
        Op::Setattr,
        Op::Fsync,
        Op::Fsyncdir,
    ];

    /// Its name in reports ("fsyncdir").
    pub fn name(self) -> &'static str {
        match self {
            Op::Create => "create",
            Op::Mkdir => "mkdir",
            Op::Symlink => "symlink",
            Op::Link => "link",
            Op::Unlink => "unlink",
            Op::Rmdir => "rmdir",
            Op::Rename => "rename",
            Op::Write => "write",
            Op::Truncate => "truncate",
            Op::Setattr => "setattr",
            Op::Fsync => "fsync",
            Op::Fsyncdir => "fsyncdir",
        }
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Cut the power right after the `nth` (from 1) operation `op` on a path matching `path`.
#[derive(Clone, Debug)]
pub struct Injection {
    /// The operation.
    pub op: Op,
    /// The paths it counts on (from the mount's root, e.g. `/j/.hookjournal/wal/…`).
    pub path: Pattern,
    /// Which matching operation cuts the power.
    pub nth: u64,
    /// What else survives the cut.
    pub writeback: Writeback,
}

impl Injection {
    /// Right after the first `op` on a path matching `glob`, keeping only what was synced.
    pub fn new(op: Op, glob: &str) -> Injection {
        Injection {
            op,
            path: Pattern::new(glob),
            nth: 1,
            writeback: Writeback::Nothing,
        }
    }

    /// After the `nth` such operation instead of the first.
    pub fn nth(mut self, nth: u64) -> Injection {
        self.nth = nth.max(1);
        self
    }

    /// With this much writeback at the cut.
    pub fn writeback(mut self, writeback: Writeback) -> Injection {
        self.writeback = writeback;
        self
    }
}

/// What a process sees of a request that would change the disk (or sync it) once the power is
/// cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterCut {
    /// No answer until the test has killed the process ([`CrashFs::release_held`]): the
    /// machine is off. Reads are still answered, so a process that had done all its writing
    /// before the cut can finish. Then "exited 0" means "acknowledged before the cut", which is
    /// what a power-loss test must know.
    Hang,
    /// The request fails with `EIO` (a process may then report success it never had).
    Fail,
    /// The request is carried out on what processes see, and nothing more becomes durable.
    Continue,
}

/// How the file system is set up.
#[derive(Clone, Debug)]
pub struct Options {
    /// Named kinds of path for [`CrashFs::counts`], first match wins; other paths count as
    /// `"other"`.
    pub kinds: Vec<(String, Pattern)>,
    /// What happens to requests after a cut.
    pub after_cut: AfterCut,
    /// When a change of names becomes durable.
    pub names: Names,
    /// How many of the last changes to remember for [`CrashFs::trace`] (0: none).
    pub trace: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            kinds: Vec::new(),
            after_cut: AfterCut::Hang,
            names: Names::AtDirSync,
            trace: 0,
        }
    }
}

impl Options {
    /// Counts operations on paths matching `glob` as kind `name`.
    pub fn kind(mut self, name: &str, glob: &str) -> Options {
        self.kinds.push((name.to_string(), Pattern::new(glob)));
        self
    }

    /// Makes name changes durable as `names` says.
    pub fn names(mut self, names: Names) -> Options {
        self.names = names;
        self
    }

    /// Remembers the last `n` changes, to show what led to a cut.
    pub fn trace(mut self, n: usize) -> Options {
        self.trace = n;
        self
    }

    /// Answers requests after a cut as `after_cut` says.
    pub fn after_cut(mut self, after_cut: AfterCut) -> Options {
        self.after_cut = after_cut;
        self
    }
}

/// The power cut that happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    /// The operation right after which it happened (`None`: cut by [`CrashFs::cut`]).
    pub op: Option<Op>,
    /// The path that operation was on.
    pub path: Option<String>,
    /// Which armed injection fired, in the order they were armed.
    pub injection: Option<usize>,
}

/// How often each operation ran on each kind of path: `(op, kind) → count`.
pub type Counts = BTreeMap<(Op, String), u64>;

pub(crate) struct State {
    pub(crate) model: model::Model,
    kinds: Vec<(String, Pattern)>,
    counts: Counts,
    armed: Vec<(Injection, u64)>,
    cut: Option<Cut>,
    pub(crate) after_cut: AfterCut,
    /// Requests not answered since the cut (replies, answered with EIO when dropped).
    pub(crate) held: Vec<Box<dyn Any + Send>>,
    /// Set by `release_held`: changes fail from now on until the next boot.
    pub(crate) releasing: bool,
    /// The last changes, oldest first, and how many to keep.
    trace: VecDeque<String>,
    trace_len: usize,
}

impl State {
    fn kind_of(&self, path: &str) -> &str {
        self.kinds
            .iter()
            .find(|(_, p)| p.matches(path))
            .map_or("other", |(n, _)| n)
    }

    fn remember(&mut self, line: String) {
        if self.trace_len == 0 {
            return;
        }
        if self.trace.len() == self.trace_len {
            self.trace.pop_front();
        }
        self.trace.push_back(line);
    }

    /// Counts an operation that `pid` just carried out on `paths` (a rename has two) and cuts
    /// the power if an armed injection point is reached; says whether it did.
    pub(crate) fn done(&mut self, pid: u32, op: Op, paths: &[&str]) -> bool {
        if self.trace_len > 0 {
            self.remember(format!("pid {pid} {op} {}", paths.join(" -> ")));
        }
        let mut kinds: Vec<String> = paths.iter().map(|p| self.kind_of(p).to_string()).collect();
        kinds.dedup();
        for k in kinds {
            *self.counts.entry((op, k)).or_insert(0) += 1;
        }
        if self.model.is_cut() {
            return false;
        }
        let mut fire = None;
        for (i, (inj, seen)) in self.armed.iter_mut().enumerate() {
            if inj.op == op && paths.iter().any(|p| inj.path.matches(p)) {
                *seen += 1;
                if *seen == inj.nth && fire.is_none() {
                    fire = Some((i, inj.writeback));
                }
            }
        }
        if let Some((i, writeback)) = fire {
            self.remember(format!("power cut ({writeback:?})"));
            self.model.cut(writeback);
            self.cut = Some(Cut {
                op: Some(op),
                path: Some(paths[paths.len() - 1].to_string()),
                injection: Some(i),
            });
            return true;
        }
        false
    }
}

pub(crate) struct Shared {
    pub(crate) state: Mutex<State>,
    /// Signalled at a cut.
    cut_signal: Condvar,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking request handler must not take the test down with a poisoned lock.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn notify_cut(&self) {
        self.cut_signal.notify_all();
    }
}

/// Whether this process can mount the file system: root, and a `/dev/fuse` it can open. The
/// error says what is missing.
pub fn available() -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("mounting a FUSE file system with mount(2) needs root".into());
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
        .map(drop)
        .map_err(|e| format!("/dev/fuse cannot be opened: {e}"))
}

/// The mounted file system and its controls. Dropping it unmounts.
pub struct CrashFs {
    shared: Arc<Shared>,
    session: Option<fuser::BackgroundSession>,
    mountpoint: PathBuf,
    boots: u64,
}

impl CrashFs {
    /// Mounts an empty file system at `mountpoint` (an existing directory), served by a thread
    /// of this process.
    pub fn mount(mountpoint: &Path, options: Options) -> io::Result<CrashFs> {
        let mut model = model::Model::new();
        model.set_names(options.names);
        let state = State {
            releasing: false,
            trace: VecDeque::new(),
            trace_len: options.trace,
            model,
            kinds: options.kinds,
            counts: Counts::new(),
            armed: Vec::new(),
            cut: None,
            after_cut: options.after_cut,
            held: Vec::new(),
        };
        let mut fs = CrashFs {
            shared: Arc::new(Shared {
                state: Mutex::new(state),
                cut_signal: Condvar::new(),
            }),
            session: None,
            mountpoint: mountpoint.to_path_buf(),
            boots: 0,
        };
        fs.start()?;
        Ok(fs)
    }

    fn start(&mut self) -> io::Result<()> {
        let mut config = fuser::Config::default();
        config.mount_options = vec![
            fuser::MountOption::FSName("crashfs".into()),
            fuser::MountOption::Subtype("crashfs".into()),
        ];
        let server = fs::Server::new(self.shared.clone());
        self.session = Some(fuser::spawn_mount(server, &self.mountpoint, &config)?);
        Ok(())
    }

    /// Where it is mounted.
    pub fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

    /// How many times it was rebooted.
    pub fn boots(&self) -> u64 {
        self.boots
    }

    /// Arms an injection point; several may be armed, the first reached cuts the power.
    pub fn arm(&self, injection: Injection) {
        self.shared.lock().armed.push((injection, 0));
    }

    /// Disarms every injection point.
    pub fn disarm(&self) {
        self.shared.lock().armed.clear();
    }

    /// Cuts the power now, between two operations (nothing if it is already cut).
    pub fn cut(&self, writeback: Writeback) {
        let mut st = self.shared.lock();
        if st.model.is_cut() {
            return;
        }
        st.remember(format!("power cut ({writeback:?})"));
        st.model.cut(writeback);
        st.cut = Some(Cut {
            op: None,
            path: None,
            injection: None,
        });
        drop(st);
        self.shared.notify_cut();
    }

    /// The cut since the last boot, if any.
    pub fn cut_info(&self) -> Option<Cut> {
        self.shared.lock().cut.clone()
    }

    /// Whether the power is cut.
    pub fn is_cut(&self) -> bool {
        self.shared.lock().model.is_cut()
    }

    /// Waits up to `timeout` for a cut; says whether there was one.
    pub fn wait_cut(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.lock();
        while !st.model.is_cut() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            st = self
                .shared
                .cut_signal
                .wait_timeout(st, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    /// Answers every request held since the cut with `EIO`, and every later change until the
    /// next boot, so killed processes can die (a request a dying process had sent may arrive
    /// after this call). Kill first: a process still alive would see the error and go on.
    /// Returns how many were held.
    pub fn release_held(&self) -> usize {
        let mut st = self.shared.lock();
        if st.model.is_cut() {
            st.releasing = true;
        }
        let held = std::mem::take(&mut st.held);
        drop(st);
        let n = held.len();
        drop(held);
        n
    }

    /// The last changes remembered ([`Options::trace`]), oldest first, each "pid P op path",
    /// and where the power was cut.
    pub fn trace(&self) -> Vec<String> {
        self.shared.lock().trace.iter().cloned().collect()
    }

    /// Makes everything durable, as `sync(2)` would (for setting up a test).
    pub fn sync(&self) {
        self.shared.lock().model.sync_all();
    }

    /// How often each operation ran on each kind of path, over every boot.
    pub fn counts(&self) -> Counts {
        self.shared.lock().counts.clone()
    }

    /// A new boot: cuts the power if it was not cut (keeping only what was synced), answers
    /// held requests, unmounts, makes what processes see what the disk held at the cut, and
    /// mounts again. Injection points are disarmed. Every process using the file system must
    /// have been killed: the unmount waits up to 10 s for them.
    pub fn reboot(&mut self) -> io::Result<()> {
        self.cut(Writeback::Nothing);
        self.release_held();
        self.unmount_now()?;
        {
            let mut st = self.shared.lock();
            st.model.boot();
            st.cut = None;
            st.armed.clear();
            st.held.clear();
            st.releasing = false;
            st.trace.clear();
        }
        self.boots += 1;
        self.start()
    }

    fn unmount_now(&mut self) -> io::Result<()> {
        let Some(session) = self.session.take() else {
            return Ok(());
        };
        let path = std::ffi::CString::new(self.mountpoint.as_os_str().as_encoded_bytes())
            .map_err(io::Error::other)?;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            // Held requests of processes that were still starting when they were killed.
            self.release_held();
            // SAFETY: a valid NUL-terminated path.
            if unsafe { libc::umount2(path.as_ptr(), 0) } == 0 {
                break;
            }
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EBUSY) || Instant::now() > deadline {
                // Leave the thread serving; the mount goes when the process ends.
                std::mem::forget(session);
                return Err(io::Error::new(
                    err.kind(),
                    format!("unmounting {}: {err}", self.mountpoint.display()),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Unmounted: the serving thread sees the connection end. (fuser's own unmount would
        // try again, and fail, on a connection that still looks alive for a moment.)
        let fuser::BackgroundSession { guard, .. } = session;
        let deadline = Instant::now() + Duration::from_secs(5);
        while !guard.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        if guard.is_finished() {
            let _ = guard.join();
        }
        Ok(())
    }

    /// Unmounts (held requests are answered with `EIO` first).
    pub fn unmount(mut self) -> io::Result<()> {
        self.unmount_now()
    }
}

impl Drop for CrashFs {
    fn drop(&mut self) {
        let _ = self.unmount_now();
    }
}
