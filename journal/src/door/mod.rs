//! The door to the disk: files opened beneath a directory handle, never through a link.
//!
//! A project tree and a journal are ground a cloned repository or another user controls, so a
//! path is never handed to the kernel whole: a directory is opened once as a handle (`Dir`), and
//! everything beneath it is reached with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//! RESOLVE_NO_MAGICLINKS)` (or, where the kernel has no `openat2`, component by component with
//! `openat(O_NOFOLLOW | O_DIRECTORY)`). Reads are bounded and never block (`O_NONBLOCK`, regular
//! files only); a file written in place must be a regular file with one link that the user owns;
//! a replacement is a new file renamed over the old inside the same handle; ownership changes go
//! through the open descriptor (`fchown`). Errors are one line, naming what was refused.
//!
//! ```
//! # let d = tempfile::tempdir().unwrap();
//! use journal::door::Dir;
//! let project = Dir::open(d.path()).unwrap();
//! project.create_dir_all(".claude".as_ref(), 0o755).unwrap();
//! project.replace(".claude/settings.json".as_ref(), 0o644, b"{}").unwrap();
//! assert_eq!(project.read(".claude/settings.json".as_ref(), 1 << 20).unwrap(), b"{}");
//! ```

pub mod by_path;

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// How much a settings or control file read through the door may hold, unless said otherwise.
pub const READ_CAP: u64 = 4 << 20;

/// A directory opened as a handle: what is beneath it is reached through it.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

/// What kind of file a `stat` mode is, in words.
fn kind_of(mode: libc::mode_t) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFREG => "a regular file",
        libc::S_IFDIR => "a directory",
        libc::S_IFLNK => "a symbolic link",
        libc::S_IFIFO => "a FIFO",
        libc::S_IFCHR => "a character device",
        libc::S_IFBLK => "a block device",
        libc::S_IFSOCK => "a socket",
        _ => "a special file",
    }
}

fn refused(what: String) -> io::Error {
    io::Error::other(what)
}

fn cstr(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holds a NUL byte"))
}

fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    // SAFETY: a zeroed stat is a valid out-parameter; fstat writes it or fails.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is an open descriptor of ours and `st` is valid for writes.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// The user this process runs as.
fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// Set once `openat2` turned out to be missing (ENOSYS) or filtered (EPERM): the walk is used.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// `rel`'s components, refusing what could leave the handle (absolute, `..`) or name nothing.
fn components(rel: &Path) -> io::Result<Vec<&OsStr>> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            _ => {
                return Err(refused(format!(
                    "{} leaves the directory it is taken from, which is not followed",
                    rel.display()
                )))
            }
        }
    }
    if out.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "an empty path"));
    }
    Ok(out)
}

/// `openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)` for one component.
fn openat1(dirfd: RawFd, name: &OsStr, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
    let c = cstr(Path::new(name))?;
    // SAFETY: `c` is a NUL-terminated string that outlives the call.
    let fd = unsafe {
        libc::openat(
            dirfd,
            c.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens `rel` beneath `dirfd` with `flags`, following no link at any component.
fn open_beneath(dirfd: RawFd, rel: &Path, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
    let parts = components(rel)?;
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        let c = cstr(rel)?;
        // SAFETY: a zeroed open_how is valid; its fields are set below.
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        how.flags = (flags | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64;
        how.mode = if flags & libc::O_CREAT != 0 {
            mode as u64
        } else {
            0
        };
        how.resolve =
            libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
        // SAFETY: `c` and `how` outlive the call, and the size is `how`'s own.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dirfd,
                c.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if fd >= 0 {
            // SAFETY: `fd` was just opened and is owned by nothing else.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) });
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::ENOSYS) | Some(libc::EPERM) => NO_OPENAT2.store(true, Ordering::Relaxed),
            _ => return Err(e),
        }
    }
    let (last, dirs) = parts
        .split_last()
        .expect("components refuses an empty path");
    let mut held: Option<OwnedFd> = None;
    for d in dirs {
        let at = held.as_ref().map_or(dirfd, |f| f.as_raw_fd());
        held = Some(openat1(at, d, libc::O_RDONLY | libc::O_DIRECTORY, 0)?);
    }
    let at = held.as_ref().map_or(dirfd, |f| f.as_raw_fd());
    openat1(at, last, flags, mode)
}

/// A file's status beneath `dirfd` as itself (`fstatat(AT_SYMLINK_NOFOLLOW)`); `None` when missing.
fn lstat_at(dirfd: RawFd, name: &OsStr) -> io::Result<Option<libc::stat>> {
    let c = cstr(Path::new(name))?;
    // SAFETY: as in `fstat`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `c` and `st` are valid for the call.
    let rc = unsafe { libc::fstatat(dirfd, c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    if rc == 0 {
        return Ok(Some(st));
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::NotFound {
        Ok(None)
    } else {
        Err(e)
    }
}

impl Dir {
    /// Opens the directory `path` as a handle. `path` itself is the caller's choice (a project
    /// root, a journal's directory, a parent the user named): it is opened as given.
    pub fn open(path: &Path) -> io::Result<Dir> {
        let c = cstr(path)?;
        // SAFETY: `c` outlives the call.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Dir {
            // SAFETY: `fd` was just opened and is owned by nothing else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            path: path.to_path_buf(),
        })
    }

    /// Opens the directory `path` as a handle, refusing a link at its last component
    /// (`O_NOFOLLOW`: `ELOOP` or `ENOTDIR`), e.g. a journal's `spool/`.
    pub fn open_nofollow(path: &Path) -> io::Result<Dir> {
        let c = cstr(path)?;
        // SAFETY: `c` outlives the call.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Dir {
            // SAFETY: `fd` was just opened and is owned by nothing else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            path: path.to_path_buf(),
        })
    }

    /// The path this handle was opened at (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why opening `rel` beneath this handle failed, in one line: which component is a link or
    /// not a directory, where the kernel only says `ELOOP`/`ENOTDIR`/`EXDEV`.
    fn explain(&self, rel: &Path, e: io::Error) -> io::Error {
        let code = e.raw_os_error();
        if !matches!(
            code,
            Some(libc::ELOOP) | Some(libc::ENOTDIR) | Some(libc::EXDEV) | Some(libc::ENXIO)
        ) {
            return e;
        }
        let Ok(parts) = components(rel) else {
            return e;
        };
        let mut at: Option<OwnedFd> = None;
        let mut shown = self.path.clone();
        for (i, p) in parts.iter().enumerate() {
            shown.push(p);
            let dirfd = at.as_ref().map_or(self.fd.as_raw_fd(), |f| f.as_raw_fd());
            match lstat_at(dirfd, p) {
                Ok(Some(st)) if st.st_mode & libc::S_IFMT == libc::S_IFLNK => {
                    return refused(format!(
                        "{} is a symbolic link, which is not followed",
                        shown.display()
                    ))
                }
                Ok(Some(st))
                    if i + 1 < parts.len() && st.st_mode & libc::S_IFMT != libc::S_IFDIR =>
                {
                    return refused(format!(
                        "{} is {}, not a directory",
                        shown.display(),
                        kind_of(st.st_mode)
                    ))
                }
                Ok(Some(st)) if i + 1 == parts.len() && code == Some(libc::ENXIO) => {
                    return refused(format!(
                        "{} is {}, which is not opened",
                        shown.display(),
                        kind_of(st.st_mode)
                    ))
                }
                Ok(Some(_)) if i + 1 < parts.len() => {
                    match openat1(dirfd, p, libc::O_RDONLY | libc::O_DIRECTORY, 0) {
                        Ok(f) => at = Some(f),
                        Err(_) => return e,
                    }
                }
                _ => return e,
            }
        }
        e
    }

    fn open_at(&self, rel: &Path, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
        open_beneath(self.fd.as_raw_fd(), rel, flags, mode).map_err(|e| self.explain(rel, e))
    }

    /// The directory `rel` beneath this one, as a handle (no link followed).
    pub fn open_dir(&self, rel: &Path) -> io::Result<Dir> {
        let fd = self.open_at(rel, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
        Ok(Dir {
            fd,
            path: self.path.join(rel),
        })
    }

    /// The directory `rel` beneath this one, created (mode `mode`) with whatever parents it
    /// lacks; a link at any component is refused, never followed.
    pub fn create_dir_all(&self, rel: &Path, mode: u32) -> io::Result<Dir> {
        let parts = components(rel)?;
        let mut cur: Option<Dir> = None;
        for p in parts {
            let at = cur.as_ref().unwrap_or(self);
            let c = cstr(Path::new(p))?;
            // SAFETY: `c` outlives the call.
            let rc = unsafe { libc::mkdirat(at.fd.as_raw_fd(), c.as_ptr(), mode as libc::mode_t) };
            if rc != 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::AlreadyExists {
                    return Err(e);
                }
            }
            cur = Some(at.open_dir(Path::new(p))?);
        }
        Ok(cur.expect("components refuses an empty path"))
    }

    /// `rel`'s status as itself (a link is not followed); `None` when it does not exist.
    /// Only the last component may be a link: one on the way is refused.
    pub fn lstat(&self, rel: &Path) -> io::Result<Option<libc::stat>> {
        let parts = components(rel)?;
        let (last, dirs) = parts
            .split_last()
            .expect("components refuses an empty path");
        let parent: PathBuf = dirs.iter().collect();
        let held;
        let dirfd = if dirs.is_empty() {
            self.fd.as_raw_fd()
        } else {
            match self.open_dir(&parent) {
                Ok(d) => {
                    held = d;
                    held.fd.as_raw_fd()
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(e),
            }
        };
        lstat_at(dirfd, last)
    }

    /// Reads `rel` whole: a regular file (a FIFO, a device, a directory is refused without
    /// blocking), at most `cap` bytes, reached through no link. `None` when it does not exist.
    pub fn read_if_present(&self, rel: &Path, cap: u64) -> io::Result<Option<Vec<u8>>> {
        match self.open_at(rel, libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY, 0) {
            Ok(fd) => read_regular(File::from(fd), &self.path.join(rel), cap).map(Some),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Reads the first `cap` bytes of `rel` (all of it when shorter): a regular file reached
    /// through no link, opened without blocking. For a file whose head says what it is (a
    /// session file's first line), read before the file itself is.
    pub fn read_head(&self, rel: &Path, cap: u64) -> io::Result<Vec<u8>> {
        let fd = self.open_at(rel, libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY, 0)?;
        let mut f = File::from(fd);
        let st = fstat(f.as_raw_fd())?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return Err(refused(format!(
                "{} is {}, which is not read",
                self.path.join(rel).display(),
                kind_of(st.st_mode)
            )));
        }
        let mut out = Vec::with_capacity((st.st_size as u64).min(cap) as usize);
        (&mut f).take(cap).read_to_end(&mut out)?;
        Ok(out)
    }

    /// Reads `rel` whole (see `read_if_present`); a missing file is an error.
    pub fn read(&self, rel: &Path, cap: u64) -> io::Result<Vec<u8>> {
        self.read_if_present(rel, cap)?
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }

    /// Creates `rel` exclusively (`O_CREAT | O_EXCL`, mode `mode`): never an existing file, never
    /// through a link.
    pub fn create_new(&self, rel: &Path, mode: u32) -> io::Result<File> {
        let fd = self.open_at(
            rel,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOCTTY,
            mode,
        )?;
        Ok(File::from(fd))
    }

    /// Opens `rel` to append, created (mode `mode`) when missing: only a regular file with one
    /// link that the running user owns (see `open_in_place`).
    pub fn append(&self, rel: &Path, mode: u32) -> io::Result<File> {
        self.in_place(rel, libc::O_WRONLY | libc::O_APPEND, mode)
    }

    /// Opens `rel` to read and write in place, created (mode `mode`) when missing: only a regular
    /// file with one link (a hard link would write into a file elsewhere) that the running user
    /// owns, reached through no link, never blocking on a FIFO.
    pub fn open_in_place(&self, rel: &Path, mode: u32) -> io::Result<File> {
        self.in_place(rel, libc::O_RDWR, mode)
    }

    fn in_place(&self, rel: &Path, flags: libc::c_int, mode: u32) -> io::Result<File> {
        let fd = self.open_at(
            rel,
            flags | libc::O_CREAT | libc::O_NONBLOCK | libc::O_NOCTTY,
            mode,
        )?;
        let f = File::from(fd);
        writable_in_place(&f, &self.path.join(rel))?;
        Ok(f)
    }

    /// Replaces `rel` with `bytes` atomically: a new file (`O_EXCL`, mode `mode`) in the same
    /// directory, synced, renamed over `rel` inside the same handle, the directory synced. What
    /// was at `rel` (a link included) is replaced as a name, never written through.
    pub fn replace(&self, rel: &Path, mode: u32, bytes: &[u8]) -> io::Result<()> {
        self.replace_with(rel, mode, true, |f| f.write_all(bytes))
    }

    /// `replace` with what `fill` writes; `durable` false skips the syncs.
    pub fn replace_with(
        &self,
        rel: &Path,
        mode: u32,
        durable: bool,
        fill: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> io::Result<()> {
        let parts = components(rel)?;
        let (last, dirs) = parts
            .split_last()
            .expect("components refuses an empty path");
        let sub;
        let dir = if dirs.is_empty() {
            self
        } else {
            sub = self.open_dir(&dirs.iter().collect::<PathBuf>())?;
            &sub
        };
        dir.replace_here(last, mode, durable, fill)
    }

    fn replace_here(
        &self,
        name: &OsStr,
        mode: u32,
        durable: bool,
        fill: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> io::Result<()> {
        let tmp = temp_name(name);
        let mut f = self.create_new(Path::new(&tmp), mode)?;
        let res = (|| {
            // The mode asked for, whatever the umask took away (a private file's mode is
            // what the umask leaves of it: no call on the hook's path).
            // SAFETY: fchmod on a descriptor we own.
            if mode & 0o077 != 0
                && unsafe { libc::fchmod(f.as_raw_fd(), mode as libc::mode_t) } != 0
            {
                return Err(io::Error::last_os_error());
            }
            fill(&mut f)?;
            if durable {
                f.sync_all()?;
            }
            drop(f);
            self.rename(Path::new(&tmp), Path::new(name))
        })();
        if res.is_err() {
            let _ = self.remove_file(Path::new(&tmp));
            return res;
        }
        if durable {
            self.sync()?;
        }
        Ok(())
    }

    /// Renames `from` to `to`, both names in this directory (`renameat`).
    pub fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let (a, b) = (cstr(from)?, cstr(to)?);
        let fd = self.fd.as_raw_fd();
        // SAFETY: both strings outlive the call.
        if unsafe { libc::renameat(fd, a.as_ptr(), fd, b.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Removes the file `name` of this directory (a link is removed, not what it points at).
    pub fn remove_file(&self, name: &Path) -> io::Result<()> {
        let c = cstr(name)?;
        // SAFETY: `c` outlives the call.
        if unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Removes the empty directory `name` of this directory (a link there is not removed, nor
    /// followed).
    pub fn remove_dir(&self, name: &Path) -> io::Result<()> {
        let c = cstr(name)?;
        // SAFETY: `c` outlives the call.
        if unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Syncs the directory (a new or renamed name in it is durable after this).
    pub fn sync(&self) -> io::Result<()> {
        // SAFETY: fsync on a descriptor we own.
        if unsafe { libc::fsync(self.fd.as_raw_fd()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Gives the directory to `uid:gid` through its handle.
    pub fn fchown(&self, uid: u32, gid: u32) -> io::Result<()> {
        fchown_fd(self.fd.as_raw_fd(), uid, gid)
    }

    /// Changes the directory's own mode through its descriptor (`fchmod`), never a path.
    pub fn fchmod(&self, mode: u32) -> io::Result<()> {
        // SAFETY: fchmod on a descriptor we own.
        if unsafe { libc::fchmod(self.fd.as_raw_fd(), mode as libc::mode_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// The directory's own status.
    pub fn stat(&self) -> io::Result<libc::stat> {
        fstat(self.fd.as_raw_fd())
    }

    /// The names in this directory (not `.` nor `..`), each with its own status (a link is
    /// not followed), read through the handle: a name swapped meanwhile for a link elsewhere is
    /// seen as the link. An entry removed between the listing and its `fstatat` is left out.
    pub fn entries(&self) -> io::Result<Vec<(std::ffi::OsString, libc::stat)>> {
        let mut out = Vec::new();
        for name in self.names()? {
            if let Some(st) = lstat_at(self.fd.as_raw_fd(), &name)? {
                out.push((name, st));
            }
        }
        Ok(out)
    }

    /// The names in this directory (not `.` nor `..`), read through the handle, none of them
    /// looked at (a count that needs no status: the hot cache's files in `status`).
    pub fn names(&self) -> io::Result<Vec<std::ffi::OsString>> {
        // SAFETY: dup of a descriptor we own; the copy is owned by the DIR stream below.
        let fd = unsafe { libc::fcntl(self.fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is ours; on success the stream owns it, on failure we close it.
        let stream = unsafe { libc::fdopendir(fd) };
        if stream.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: `fd` is still ours.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        // The dup shares its offset with our handle: start from the top.
        // SAFETY: `stream` is a valid DIR stream.
        unsafe { libc::rewinddir(stream) };
        let mut names = Vec::new();
        loop {
            // SAFETY: `stream` is valid; the entry is read before the next readdir.
            let ent = unsafe { libc::readdir(stream) };
            if ent.is_null() {
                break;
            }
            // SAFETY: `d_name` is NUL-terminated by readdir.
            let name = unsafe { std::ffi::CStr::from_ptr((*ent).d_name.as_ptr()) };
            let bytes = name.to_bytes();
            if bytes != b"." && bytes != b".." {
                names.push(std::ffi::OsString::from(OsStr::from_bytes(bytes)));
            }
        }
        // SAFETY: closes the stream and the dup'd descriptor it owns.
        unsafe { libc::closedir(stream) };
        Ok(names)
    }
}

/// A temp name beside `name` that no other call or process makes.
fn temp_name(name: &OsStr) -> std::ffi::OsString {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut t = std::ffi::OsString::from(".");
    t.push(name);
    t.push(format!(
        ".hookjournal-{ns}-{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    t
}

fn fchown_fd(fd: RawFd, uid: u32, gid: u32) -> io::Result<()> {
    // SAFETY: fchown on a descriptor the caller holds open.
    if unsafe { libc::fchown(fd, uid, gid) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Gives the open file `f` to `uid:gid` (the handle, never a path another process can swap).
pub fn fchown(f: &File, uid: u32, gid: u32) -> io::Result<()> {
    fchown_fd(f.as_raw_fd(), uid, gid)
}

/// Whether an open file may be written in place: a regular file with one link that the running
/// user owns. `shown` names it in the refusal.
pub fn writable_in_place(f: &File, shown: &Path) -> io::Result<()> {
    let st = fstat(f.as_raw_fd())?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(refused(format!(
            "{} is {}, which is not written",
            shown.display(),
            kind_of(st.st_mode)
        )));
    }
    if st.st_nlink != 1 {
        return Err(refused(format!(
            "{} has {} hard links (another name elsewhere would change too), which is not written in place",
            shown.display(),
            st.st_nlink
        )));
    }
    if st.st_uid != euid() {
        return Err(refused(format!(
            "{} belongs to another user (uid {}), which is not written",
            shown.display(),
            st.st_uid
        )));
    }
    Ok(())
}

/// Reads an open file whole: a regular file of at most `cap` bytes.
fn read_regular(mut f: File, shown: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let st = fstat(f.as_raw_fd())?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(refused(format!(
            "{} is {}, which is not read",
            shown.display(),
            kind_of(st.st_mode)
        )));
    }
    if st.st_size as u64 > cap {
        return Err(refused(format!(
            "{} is larger than {cap} bytes, which is not read",
            shown.display()
        )));
    }
    // A file of the kernel's (`/proc`) says size 0: room for a small one, so it is read whole
    // in one call, not in 32-byte probes.
    let room = if st.st_size > 0 {
        st.st_size as u64
    } else {
        cap.min(256)
    };
    let mut out = Vec::with_capacity(room as usize);
    (&mut f).take(cap + 1).read_to_end(&mut out)?;
    if out.len() as u64 > cap {
        return Err(refused(format!(
            "{} is larger than {cap} bytes, which is not read",
            shown.display()
        )));
    }
    Ok(out)
}

/// Opens the file at `path` to read, a link at it followed (a file of the user's own, or one a
/// payload or the user names), without blocking (`O_NONBLOCK`: a FIFO nobody writes is refused,
/// not waited on): a regular file only, a special file or a directory refused in one line.
/// `NotFound` when missing.
pub fn open_following(path: &Path) -> io::Result<File> {
    let f = open_following_unchecked(path)?;
    let st = fstat(f.as_raw_fd())?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(refused(format!(
            "{} is {}, which is not read",
            path.display(),
            kind_of(st.st_mode)
        )));
    }
    Ok(f)
}

/// `open_following` without the check that it is a regular file (the caller makes it).
fn open_following_unchecked(path: &Path) -> io::Result<File> {
    let c = cstr(path)?;
    // SAFETY: `c` outlives the call.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(if e.raw_os_error() == Some(libc::ENXIO) {
            refused(format!(
                "{} is a special file, which is not read",
                path.display()
            ))
        } else {
            e
        });
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Reads the file at `path` whole, a link at it followed (a file of the user's own, such as a
/// dotfile manager's link in the home), but bounded: a regular file of at most `cap` bytes,
/// opened without blocking (a FIFO or a device is refused in one line). `None` when missing.
pub fn read_following(path: &Path, cap: u64) -> io::Result<Option<Vec<u8>>> {
    // `read_regular` makes `open_following`'s check, from the one `fstat` it sizes the read by.
    match open_following_unchecked(path) {
        Ok(f) => read_regular(f, path, cap).map(Some),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// `path`'s status as itself (a link at its last component is described, not followed); only
/// its status is asked, nothing opened. `None` when it does not exist.
pub fn lstat(path: impl AsRef<Path>) -> io::Result<Option<libc::stat>> {
    let c = cstr(path.as_ref())?;
    // SAFETY: `st` is written by lstat before it is read; `c` outlives the call.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::lstat(c.as_ptr(), &mut st) } != 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::NotFound => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Some(st))
}

/// `path`'s metadata as itself (`symlink_metadata`: a link is described, not followed); only its
/// status is asked, nothing opened. The journal's own checks of what a name is go through here.
pub fn status(path: impl AsRef<Path>) -> io::Result<std::fs::Metadata> {
    std::fs::symlink_metadata(path)
}

/// How long ago `path` (itself, not a link's target) was last modified; `None` when it does
/// not exist (or its time is in the future).
pub fn age(path: &Path) -> Option<std::time::Duration> {
    let st = lstat(path).ok()??;
    let at = std::time::UNIX_EPOCH
        + std::time::Duration::new(st.st_mtime.max(0) as u64, st.st_mtime_nsec.max(0) as u32);
    at.elapsed().ok()
}

/// Removes the name `path` (a link there is removed, not followed): for a file in a directory
/// already checked (a journal's, which is never a link). As `std::fs::remove_file`: a missing
/// file is `NotFound`.
pub fn unlink(path: impl AsRef<Path>) -> io::Result<()> {
    let c = cstr(path.as_ref())?;
    // SAFETY: `c` outlives the call.
    if unsafe { libc::unlink(c.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The file `path` names, links followed, as `(device, inode)`: whether two paths are one file.
/// Only its status is asked; nothing is opened.
pub fn identity(path: &Path) -> io::Result<(u64, u64)> {
    let c = cstr(path)?;
    // SAFETY: `st` is written by stat before it is read; `c` outlives the call.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::stat(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((st.st_dev, st.st_ino))
}

/// Reads the file at `path` whole as `read_following` does, but never through a link at its
/// last component (`O_NOFOLLOW`): for a file in a tree a repository controls, read by path.
pub fn read_nofollow(path: &Path, cap: u64) -> io::Result<Option<Vec<u8>>> {
    let c = cstr(path)?;
    // SAFETY: `c` outlives the call.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC | libc::O_NOFOLLOW,
        )
    };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENOENT) => Ok(None),
            Some(libc::ELOOP) => Err(refused(format!(
                "{} is a symbolic link, which is not followed",
                path.display()
            ))),
            _ => Err(e),
        };
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let f = unsafe { File::from_raw_fd(fd) };
    read_regular(f, path, cap).map(Some)
}

/// Reads `path` whole on its ground: beneath `project` (a tree a repository controls) through
/// the project's handle and no link at any component (`Dir::read_if_present`); anywhere else
/// (the user's home and config directories) as `read_following`. Bounded by `cap`, never
/// blocking, a regular file only; `None` when missing. A `project` that is the home itself
/// (`$HOME`) is the user's own ground: read as linked.
pub fn read_on_ground(
    project: Option<&Path>,
    path: &Path,
    cap: u64,
) -> io::Result<Option<Vec<u8>>> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
    let project = project.filter(|p| home.as_deref().is_none_or(|h| Path::new(h) != *p));
    match project.and_then(|root| Some((root, path.strip_prefix(root).ok()?))) {
        Some((root, rel)) if !rel.as_os_str().is_empty() => {
            Dir::open(root)?.read_if_present(rel, cap)
        }
        _ => read_following(path, cap),
    }
}

/// Creates the directory `path` and whatever parents it lacks, by path (mode `mode`): for the
/// user's own directories (a home's `~/.claude`), where links are the user's.
pub fn create_dirs(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(mode)
        .create(path)
}

/// What the link at `link` points at, when following it is the user's own choice: the link and
/// its target both the running user's, the target a regular file with one link (a dotfile
/// manager's `~/.claude/settings.json -> ~/dotfiles/claude.json`). Anything else is refused in one
/// line.
pub fn own_link_target(link: &Path) -> io::Result<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let me = euid();
    let l = std::fs::symlink_metadata(link)?;
    let real = std::fs::canonicalize(link).map_err(|_| {
        refused(format!(
            "{} is a symbolic link to nothing, which is not followed",
            link.display()
        ))
    })?;
    let m = std::fs::symlink_metadata(&real)?;
    if l.uid() != me || m.uid() != me || !m.is_file() || m.nlink() != 1 {
        return Err(refused(format!(
            "{} is a symbolic link to {}, which is followed only when you own both and it is a regular file with one link",
            link.display(),
            real.display()
        )));
    }
    Ok(real)
}

/// The first executable file `name` in the directories of `path_var` (a `PATH`), taking only
/// absolute entries: an empty entry (the current directory) or a relative one (`node_modules/.bin`)
/// would run what the repository one works in supplies.
pub fn find_program(name: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path_var?)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// Given a project with a file outside it (the victim), the door's handle on the project.
    fn given() -> (tempfile::TempDir, Dir, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("project");
        std::fs::create_dir_all(project.join("sub")).unwrap();
        let victim = root.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let dir = Dir::open(&project).unwrap();
        (root, dir, victim)
    }

    fn mkfifo(p: &Path) {
        let c = cstr(p).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn a_link_at_a_middle_component_is_refused_and_named() {
        let (root, dir, victim) = given();
        symlink(root.path(), dir.path().join("up")).unwrap();
        let e = dir.read(Path::new("up/victim"), READ_CAP).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("/up is a symbolic link, which is not followed"),
            "{e}"
        );
        let e = dir
            .replace(Path::new("up/victim"), 0o644, b"x")
            .unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let e = dir.create_dir_all(Path::new("up/x"), 0o755).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert!(!root.path().join("x").exists());
    }

    #[test]
    fn a_link_at_the_last_component_is_refused_for_reads_and_appends() {
        let (_root, dir, victim) = given();
        symlink(&victim, dir.path().join("sub/log")).unwrap();
        let e = dir.read(Path::new("sub/log"), READ_CAP).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("sub/log is a symbolic link, which is not followed"),
            "{e}"
        );
        assert!(dir.append(Path::new("sub/log"), 0o644).is_err());
        assert!(dir.create_new(Path::new("sub/log"), 0o644).is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    }

    #[test]
    fn a_replace_over_a_link_replaces_the_link_not_its_target() {
        let (_root, dir, victim) = given();
        symlink(&victim, dir.path().join("f")).unwrap();
        dir.replace(Path::new("f"), 0o600, b"new").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        let m = std::fs::symlink_metadata(dir.path().join("f")).unwrap();
        assert!(m.is_file());
        assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), b"new");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "no temp file left"
        );
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let (_root, dir, _) = given();
        mkfifo(&dir.path().join("fifo"));
        let started = std::time::Instant::now();
        let e = dir.read(Path::new("fifo"), READ_CAP).unwrap_err();
        assert!(
            e.to_string().ends_with("fifo is a FIFO, which is not read"),
            "{e}"
        );
        assert!(dir.append(Path::new("fifo"), 0o644).is_err());
        let e = read_following(&dir.path().join("fifo"), READ_CAP).unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn dev_zero_through_a_link_is_never_read() {
        let (_root, dir, _) = given();
        symlink("/dev/zero", dir.path().join("zero")).unwrap();
        assert!(dir.read(Path::new("zero"), READ_CAP).is_err());
        assert!(read_nofollow(&dir.path().join("zero"), READ_CAP).is_err());
        // Followed (a home file), it is still a device: refused, not read.
        let e = read_following(&dir.path().join("zero"), READ_CAP).unwrap_err();
        assert!(
            e.to_string()
                .contains("a character device, which is not read"),
            "{e}"
        );
    }

    #[test]
    fn a_hard_linked_file_is_not_written_in_place() {
        let (_root, dir, victim) = given();
        std::fs::hard_link(&victim, dir.path().join("clock")).unwrap();
        let e = dir.open_in_place(Path::new("clock"), 0o600).unwrap_err();
        assert!(e.to_string().contains("has 2 hard links"), "{e}");
        assert!(dir.append(Path::new("clock"), 0o600).is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    }

    #[test]
    fn a_too_big_file_is_refused() {
        let (_root, dir, _) = given();
        std::fs::write(dir.path().join("big"), vec![b'x'; 100]).unwrap();
        let e = dir.read(Path::new("big"), 99).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("big is larger than 99 bytes, which is not read"),
            "{e}"
        );
        assert_eq!(dir.read(Path::new("big"), 100).unwrap().len(), 100);
    }

    #[test]
    fn dot_dot_and_absolute_paths_never_leave_the_handle() {
        let (_root, dir, _) = given();
        for rel in ["../victim", "sub/../../victim", "/etc/passwd"] {
            assert!(dir.read(Path::new(rel), READ_CAP).is_err(), "{rel}");
            assert!(dir.append(Path::new(rel), 0o644).is_err(), "{rel}");
        }
    }

    #[test]
    fn the_walk_without_openat2_refuses_the_same_links() {
        let (root, dir, victim) = given();
        symlink(root.path(), dir.path().join("up")).unwrap();
        symlink(&victim, dir.path().join("sub/log")).unwrap();
        let fd = dir.fd.as_raw_fd();
        NO_OPENAT2.store(true, Ordering::Relaxed);
        let a = open_beneath(fd, Path::new("up/victim"), libc::O_RDONLY, 0);
        let b = open_beneath(fd, Path::new("sub/log"), libc::O_WRONLY | libc::O_APPEND, 0);
        let c = open_beneath(fd, Path::new("sub"), libc::O_RDONLY | libc::O_DIRECTORY, 0);
        NO_OPENAT2.store(false, Ordering::Relaxed);
        // A link opened as a directory with O_NOFOLLOW is ENOTDIR; as the last component, ELOOP.
        assert_eq!(a.unwrap_err().raw_os_error(), Some(libc::ENOTDIR));
        assert_eq!(b.unwrap_err().raw_os_error(), Some(libc::ELOOP));
        assert!(c.is_ok());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    }

    #[test]
    fn an_append_creates_then_appends_and_a_replace_keeps_the_mode_asked() {
        use std::os::unix::fs::PermissionsExt;
        let (_root, dir, _) = given();
        let sub = dir.create_dir_all(Path::new("logs/deep"), 0o755).unwrap();
        for line in ["a\n", "b\n"] {
            sub.append(Path::new("log"), 0o644)
                .unwrap()
                .write_all(line.as_bytes())
                .unwrap();
        }
        assert_eq!(dir.read(Path::new("logs/deep/log"), 10).unwrap(), b"a\nb\n");
        dir.replace(Path::new("logs/deep/log"), 0o640, b"c")
            .unwrap();
        let m = std::fs::metadata(dir.path().join("logs/deep/log")).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o640);
    }

    #[test]
    fn a_home_link_is_followed_only_to_a_single_link_file_of_ones_own() {
        let (root, _dir, victim) = given();
        let link = root.path().join("settings.json");
        symlink(&victim, &link).unwrap();
        assert_eq!(
            own_link_target(&link).unwrap(),
            victim.canonicalize().unwrap()
        );
        // A target with a second name (a hard link) is refused.
        std::fs::hard_link(&victim, root.path().join("second")).unwrap();
        let e = own_link_target(&link).unwrap_err();
        assert!(
            e.to_string().contains("followed only when you own both"),
            "{e}"
        );
        // A dangling link is refused.
        let dangling = root.path().join("dangling");
        symlink(root.path().join("nothing"), &dangling).unwrap();
        assert!(own_link_target(&dangling).is_err());
    }

    #[test]
    fn a_read_on_the_project_follows_no_link_and_one_in_the_home_does() {
        // Given a project whose settings and a parent are links to the victim, and a home file
        // that is a link to the same victim.
        let (root, _, victim) = given();
        let project = root.path().join("project");
        symlink(&victim, project.join("settings.json")).unwrap();
        symlink(root.path(), project.join("up")).unwrap();
        let home = root.path().join("home");
        std::fs::create_dir(&home).unwrap();
        symlink(&victim, home.join("settings.json")).unwrap();
        // When each is read on its ground.
        let read = |p: &Path| read_on_ground(Some(&project), p, READ_CAP);
        // Then beneath the project no link is followed, at the file or on the way; a missing
        // file is None; the home's link is the user's own and is read through.
        assert!(read(&project.join("settings.json")).is_err());
        assert!(read(&project.join("up/victim")).is_err());
        assert_eq!(read(&project.join("sub/missing")).unwrap(), None);
        assert_eq!(read(&home.join("settings.json")).unwrap().unwrap(), b"keep");
    }

    #[test]
    fn find_program_skips_empty_and_relative_entries() {
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::fs::write(bin.join("tool"), "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(bin.join("tool"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = format!(":bin:./bin:{}", bin.display());
        assert_eq!(
            find_program("tool", Some(OsStr::new(&path))),
            Some(bin.join("tool"))
        );
        assert_eq!(find_program("tool", Some(OsStr::new(":bin:./bin"))), None);
    }
}
