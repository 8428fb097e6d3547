//! The FUSE side: each request becomes a call on the model, every change is counted (and may
//! reach an injection point), and after a cut a change is held, refused or carried out as
//! `AfterCut` says. The kernel writes through (no writeback cache), so every `write(2)` arrives
//! here before it returns, and `sync_file_range(2)`, which sends nothing, makes nothing durable.

use crate::model::{Ino, Kind, Node};
use crate::{AfterCut, Op, Shared, State};
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// How long the kernel may cache names and attributes: nothing changes them behind its back
/// while mounted (a reboot remounts).
const TTL: Duration = Duration::from_secs(1);

/// A directory as `opendir` listed it: inode, type and name of each entry.
type Listing = Vec<(Ino, FileType, OsString)>;

pub(crate) struct Server {
    shared: Arc<Shared>,
    /// Open directory handles: the listing as it was at `opendir`, so a directory that changes
    /// while it is read lists every entry that stays exactly once.
    dirs: Mutex<HashMap<u64, Listing>>,
    next_fh: AtomicU64,
}

impl Server {
    pub(crate) fn new(shared: Arc<Shared>) -> Server {
        Server {
            shared,
            dirs: Mutex::new(HashMap::new()),
            next_fh: AtomicU64::new(1),
        }
    }

    /// Counts a change `req` just made and notifies a cut it caused.
    fn done(&self, req: &Request, st: &mut State, op: Op, paths: &[&str]) {
        if st.done(req.pid(), op, paths) {
            self.shared.notify_cut();
        }
    }
}

/// A reply that can carry an error: what a held or refused change is answered with.
trait Refuse: Send + 'static {
    fn refuse(self, e: Errno);
}

macro_rules! refuse {
    ($($t:ty),*) => {$(
        impl Refuse for $t {
            fn refuse(self, e: Errno) {
                self.error(e)
            }
        }
    )*};
}
refuse!(ReplyEmpty, ReplyEntry, ReplyCreate, ReplyWrite, ReplyAttr);

/// Before a change to the disk: after a cut it is held, refused, or let through.
fn admit<R: Refuse>(st: &mut State, reply: R) -> Option<R> {
    if !st.model.is_cut() {
        return Some(reply);
    }
    if st.releasing {
        reply.refuse(Errno::EIO);
        return None;
    }
    match st.after_cut {
        AfterCut::Hang => {
            st.held.push(Box::new(reply));
            None
        }
        AfterCut::Fail => {
            reply.refuse(Errno::EIO);
            None
        }
        AfterCut::Continue => Some(reply),
    }
}

fn errno(e: i32) -> Errno {
    Errno::from_i32(e)
}

fn file_type(kind: Kind) -> FileType {
    match kind {
        Kind::File => FileType::RegularFile,
        Kind::Dir => FileType::Directory,
        Kind::Symlink => FileType::Symlink,
    }
}

fn attr(ino: Ino, n: &Node) -> FileAttr {
    let size = match n.kind {
        Kind::Dir => 4096,
        _ => n.data.len() as u64,
    };
    FileAttr {
        ino: INodeNo(ino),
        size,
        blocks: size.div_ceil(512),
        atime: n.atime,
        mtime: n.mtime,
        ctime: n.ctime,
        crtime: n.ctime,
        kind: file_type(n.kind),
        perm: n.perm,
        nlink: n.nlink,
        uid: n.uid,
        gid: n.gid,
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}

fn perm(mode: u32, umask: u32) -> u16 {
    ((mode & !umask) & 0o7777) as u16
}

fn time(t: TimeOrNow) -> SystemTime {
    match t {
        TimeOrNow::SpecificTime(t) => t,
        TimeOrNow::Now => SystemTime::now(),
    }
}

impl Server {
    /// Creates a node and answers with its entry (`create` answers for itself).
    #[allow(clippy::too_many_arguments)]
    fn make(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        kind: Kind,
        perm: u16,
        data: &[u8],
        op: Op,
        reply: ReplyEntry,
    ) {
        let mut st = self.shared.lock();
        let Some(reply) = admit(&mut st, reply) else {
            return;
        };
        match st
            .model
            .create(parent.0, name, kind, perm, (req.uid(), req.gid()), data)
        {
            Ok(ino) => {
                let path = st.model.child_path(parent.0, name);
                self.done(req, &mut st, op, &[&path]);
                let a = attr(ino, st.model.node(ino).expect("just created"));
                reply.entry(&TTL, &a, Generation(0));
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn remove(&self, req: &Request, parent: INodeNo, name: &OsStr, dir: bool, reply: ReplyEmpty) {
        let mut st = self.shared.lock();
        let Some(reply) = admit(&mut st, reply) else {
            return;
        };
        let path = st.model.child_path(parent.0, name);
        match st.model.remove(parent.0, name, dir) {
            Ok(()) => {
                let op = if dir { Op::Rmdir } else { Op::Unlink };
                self.done(req, &mut st, op, &[&path]);
                reply.ok();
            }
            Err(e) => reply.error(errno(e)),
        }
    }
}

impl Filesystem for Server {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let st = self.shared.lock();
        match st.model.lookup(parent.0, name) {
            Ok(ino) => {
                let a = attr(ino, st.model.node(ino).expect("a named inode"));
                reply.entry(&TTL, &a, Generation(0));
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        let st = self.shared.lock();
        match st.model.node(ino.0) {
            Some(n) => reply.attr(&TTL, &attr(ino.0, n)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut st = self.shared.lock();
        let Some(reply) = admit(&mut st, reply) else {
            return;
        };
        let res = (|| {
            if let Some(size) = size {
                st.model.set_size(ino.0, size)?;
            }
            st.model
                .set_attr(ino.0, mode.map(|m| perm(m, 0)), uid, gid)?;
            st.model.set_times(ino.0, atime.map(time), mtime.map(time))
        })();
        match res {
            Ok(()) => {
                let path = st.model.path(ino.0);
                let op = if size.is_some() {
                    Op::Truncate
                } else {
                    Op::Setattr
                };
                self.done(req, &mut st, op, &[&path]);
                let a = attr(ino.0, st.model.node(ino.0).expect("just changed"));
                reply.attr(&TTL, &a);
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        let st = self.shared.lock();
        match st.model.node(ino.0) {
            Some(n) if n.kind == Kind::Symlink => reply.data(&n.data),
            Some(_) => reply.error(Errno::EINVAL),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn mknod(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        _rdev: u32,
        reply: ReplyEntry,
    ) {
        if mode & libc::S_IFMT != libc::S_IFREG {
            // Devices, fifos and sockets are not modelled.
            reply.error(Errno::EPERM);
            return;
        }
        let p = perm(mode, umask);
        self.make(req, parent, name, Kind::File, p, &[], Op::Create, reply);
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let p = perm(mode, umask);
        self.make(req, parent, name, Kind::Dir, p, &[], Op::Mkdir, reply);
    }

    fn unlink(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        self.remove(req, parent, name, false, reply);
    }

    fn rmdir(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        self.remove(req, parent, name, true, reply);
    }

    fn symlink(
        &self,
        req: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &Path,
        reply: ReplyEntry,
    ) {
        let t = target.as_os_str().as_bytes();
        self.make(
            req,
            parent,
            link_name,
            Kind::Symlink,
            0o777,
            t,
            Op::Symlink,
            reply,
        );
    }

    fn rename(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        if flags.intersects(RenameFlags::RENAME_EXCHANGE | RenameFlags::RENAME_WHITEOUT) {
            reply.error(Errno::EINVAL);
            return;
        }
        let mut st = self.shared.lock();
        let Some(reply) = admit(&mut st, reply) else {
            return;
        };
        let from = st.model.child_path(parent.0, name);
        let to = st.model.child_path(newparent.0, newname);
        let noreplace = flags.contains(RenameFlags::RENAME_NOREPLACE);
        match st
            .model
            .rename(parent.0, name, newparent.0, newname, noreplace)
        {
            Ok(()) => {
                self.done(req, &mut st, Op::Rename, &[&from, &to]);
                reply.ok();
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn link(
        &self,
        req: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        let mut st = self.shared.lock();
        let Some(reply) = admit(&mut st, reply) else {
            return;
        };
        match st.model.link(ino.0, newparent.0, newname) {
            Ok(()) => {
                let path = st.model.child_path(newparent.0, newname);
                self.done(req, &mut st, Op::Link, &[&path]);
                let a = attr(ino.0, st.model.node(ino.0).expect("just linked"));
                reply.entry(&TTL, &a, Generation(0));
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.shared.lock().model.open(ino.0) {
            // No flush on close: close makes nothing durable.
            Ok(()) => reply.opened(FileHandle(0), FopenFlags::FOPEN_NOFLUSH),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let st = self.shared.lock();
        match st.model.read(ino.0, offset, size) {
            Ok(bytes) => reply.data(bytes),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn write(
        &self,
        req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let mut st = self.shared.lock();
        let Some(reply) = admit(&mut st, reply) else {
            return;
        };
        match st.model.write(ino.0, offset, data) {
            Ok(n) => {
                let path = st.model.path(ino.0);
                self.done(req, &mut st, Op::Write, &[&path]);
                reply.written(n as u32);
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.shared.lock().model.release(ino.0);
        reply.ok();
    }

    fn fsync(
        &self,
        req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        let mut st = self.shared.lock();
        let Some(reply) = admit(&mut st, reply) else {
            return;
        };
        match st.model.fsync(ino.0) {
            Ok(()) => {
                let path = st.model.path(ino.0);
                self.done(req, &mut st, Op::Fsync, &[&path]);
                reply.ok();
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let st = self.shared.lock();
        let Some(n) = st.model.node(ino.0) else {
            reply.error(Errno::ENOENT);
            return;
        };
        if n.kind != Kind::Dir {
            reply.error(Errno::ENOTDIR);
            return;
        }
        let mut list = vec![
            (ino.0, FileType::Directory, OsString::from(".")),
            (n.parent, FileType::Directory, OsString::from("..")),
        ];
        for (name, &child) in &n.entries {
            let kind = st
                .model
                .node(child)
                .map_or(FileType::RegularFile, |c| file_type(c.kind));
            list.push((child, kind, name.clone()));
        }
        drop(st);
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        self.dirs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(fh, list);
        reply.opened(FileHandle(fh), FopenFlags::empty());
    }

    fn readdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let dirs = self.dirs.lock().unwrap_or_else(|e| e.into_inner());
        let Some(list) = dirs.get(&fh.0) else {
            reply.error(Errno::EBADF);
            return;
        };
        for (i, (ino, kind, name)) in list.iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(*ino), i as u64 + 1, *kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        self.dirs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&fh.0);
        reply.ok();
    }

    fn fsyncdir(
        &self,
        req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        let mut st = self.shared.lock();
        let Some(reply) = admit(&mut st, reply) else {
            return;
        };
        match st.model.fsyncdir(ino.0) {
            Ok(()) => {
                let path = st.model.path(ino.0);
                self.done(req, &mut st, Op::Fsyncdir, &[&path]);
                reply.ok();
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        // Plenty of room: a full disk is another test's subject.
        reply.statfs(1 << 22, 1 << 21, 1 << 21, 1 << 20, 1 << 19, 4096, 255, 4096);
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        reply.ok();
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        let mut st = self.shared.lock();
        let Some(reply) = admit(&mut st, reply) else {
            return;
        };
        let p = perm(mode, umask);
        match st
            .model
            .create(parent.0, name, Kind::File, p, (req.uid(), req.gid()), &[])
        {
            Ok(ino) => {
                st.model.open(ino).expect("just created");
                let path = st.model.child_path(parent.0, name);
                self.done(req, &mut st, Op::Create, &[&path]);
                let a = attr(ino, st.model.node(ino).expect("just created"));
                reply.created(
                    &TTL,
                    &a,
                    Generation(0),
                    FileHandle(0),
                    FopenFlags::FOPEN_NOFLUSH,
                );
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn fallocate(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _offset: u64,
        _length: u64,
        _mode: i32,
        reply: ReplyEmpty,
    ) {
        reply.error(Errno::EOPNOTSUPP);
    }
}
