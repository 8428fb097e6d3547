//! The durability model, without FUSE: what processes see (*current*), what a power cut leaves
//! (*durable*), and the strict POSIX rules that move the one into the other. The FUSE layer
//! (`fs.rs`) only translates requests into these calls, so the rules can be read and tested here.
//!
//! The rules:
//! * a file's data and size become durable when that file is fsynced (or fdatasynced);
//! * a name (create, mkdir, symlink, link, unlink, rmdir, rename) becomes durable only when its
//!   directory is fsynced afterwards; a rename between two directories is two changes, one per
//!   directory, each made durable by its own directory's fsync;
//! * a name made durable before its file was ever fsynced names an empty file;
//! * at a power cut, whatever is not reachable from the root through durable names is gone.
//!
//! Between syncs an operating system also writes back on its own, in any order and in pieces.
//! `Writeback::Random` models that at the cut: a seeded choice of the pending directory changes
//! becomes durable, and of each file's unsynced pages some persist, some do not, and some persist
//! only as a prefix of 512-byte sectors; a file's new size may persist without its data (a tail
//! of zeros).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::{OsStr, OsString};
use std::time::SystemTime;

/// An inode number; the root directory is [`ROOT`]. Numbers are never reused, not even across
/// boots, so the durable and the current state name the same inode alike.
pub type Ino = u64;
/// The root directory's inode number (FUSE's).
pub const ROOT: Ino = 1;
/// The unit of writeback: a page.
pub const PAGE: u64 = 4096;
/// The unit a torn page is cut at: a disk sector.
const SECTOR: u64 = 512;

/// What an inode is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (its target is its data).
    Symlink,
}

/// What survives a power cut beyond the synced state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writeback {
    /// Nothing: exactly what was synced survives.
    Nothing,
    /// Background writeback had done part of its work: a choice, made by this seed, of the
    /// pending directory changes and of each unsynced file's pages (whole, torn or not at all).
    Random(u64),
}

/// When a change of name (create, unlink, rename…) becomes durable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Names {
    /// When its directory is fsynced afterwards: the strict POSIX rule.
    #[default]
    AtDirSync,
    /// As soon as it is made, as on a file system that commits metadata synchronously (and
    /// roughly as ext4 does, which commits it in order within seconds). For telling the bugs
    /// the strict rule finds apart from the others.
    Immediate,
}

/// An error, as the errno FUSE returns.
pub type Result<T> = std::result::Result<T, i32>;

/// An inode as processes see it.
#[derive(Clone, Debug)]
pub struct Node {
    /// File, directory or symlink.
    pub kind: Kind,
    /// Permission bits.
    pub perm: u16,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// A file's bytes; a symlink's target.
    pub data: Vec<u8>,
    /// A directory's entries.
    pub entries: BTreeMap<OsString, Ino>,
    /// Names that refer to it (a directory: 2).
    pub nlink: u32,
    /// Last access.
    pub atime: SystemTime,
    /// Last modification.
    pub mtime: SystemTime,
    /// Last change.
    pub ctime: SystemTime,
    /// The directory of the name it was last given: paths are for matching injection points, and
    /// an unlinked file keeps the name it had.
    pub parent: Ino,
    /// That name.
    pub name: OsString,
    /// Open handles: an unlinked file lives until the last is released.
    opens: u32,
    /// Pages written since the file was last synced.
    dirty: BTreeSet<u64>,
}

/// An inode as the disk holds it.
#[derive(Clone, Debug)]
struct Stored {
    kind: Kind,
    perm: u16,
    uid: u32,
    gid: u32,
    data: Vec<u8>,
    entries: BTreeMap<OsString, Ino>,
}

/// The disk: every stored inode, reachable or not.
#[derive(Clone, Debug, Default)]
struct Disk {
    nodes: HashMap<Ino, Stored>,
}

/// A directory change not yet durable: the names of `dir` it sets (`Some`) or removes (`None`),
/// together. A rename within one directory is one change, so writeback never splits it.
#[derive(Clone, Debug)]
struct DirChange {
    dir: Ino,
    names: Vec<(OsString, Option<Ino>)>,
}

/// The whole state of the file system across boots.
#[derive(Debug)]
pub struct Model {
    nodes: HashMap<Ino, Node>,
    durable: Disk,
    pending: Vec<DirChange>,
    /// Set by a power cut: the disk as it will be found at the next boot.
    frozen: Option<Disk>,
    next_ino: Ino,
    names: Names,
}

impl Default for Model {
    fn default() -> Self {
        Self::new()
    }
}

impl Model {
    /// An empty file system whose root directory is durable.
    pub fn new() -> Model {
        let mut m = Model {
            nodes: HashMap::new(),
            durable: Disk::default(),
            pending: Vec::new(),
            frozen: None,
            next_ino: ROOT + 1,
            names: Names::AtDirSync,
        };
        let root = Node::new(Kind::Dir, 0o755, 0, 0, ROOT, OsString::new());
        m.durable.nodes.insert(ROOT, Stored::of(&root));
        m.nodes.insert(ROOT, root);
        m
    }

    /// Makes name changes durable as `names` says, from now on.
    pub fn set_names(&mut self, names: Names) {
        self.names = names;
    }

    /// Records a change of names: pending until its directory is synced, or durable at once.
    fn changed(&mut self, change: DirChange) {
        match self.names {
            Names::AtDirSync => self.pending.push(change),
            Names::Immediate => persist(&mut self.durable, &self.nodes, &change),
        }
    }

    /// The inode, if it exists (an unlinked file exists while it is open).
    pub fn node(&self, ino: Ino) -> Option<&Node> {
        self.nodes.get(&ino)
    }

    fn node_mut(&mut self, ino: Ino) -> Result<&mut Node> {
        self.nodes.get_mut(&ino).ok_or(libc::ENOENT)
    }

    fn dir(&self, ino: Ino) -> Result<&Node> {
        let n = self.nodes.get(&ino).ok_or(libc::ENOENT)?;
        if n.kind != Kind::Dir {
            return Err(libc::ENOTDIR);
        }
        Ok(n)
    }

    /// `name` in directory `parent`.
    pub fn lookup(&self, parent: Ino, name: &OsStr) -> Result<Ino> {
        self.dir(parent)?
            .entries
            .get(name)
            .copied()
            .ok_or(libc::ENOENT)
    }

    /// The path of an inode from the root ("/a/b"), by the names it was last given.
    pub fn path(&self, ino: Ino) -> String {
        let mut parts = Vec::new();
        let mut at = ino;
        // Bounded: a rename cycle is refused, but a stale parent must not loop forever.
        for _ in 0..256 {
            if at == ROOT {
                break;
            }
            let Some(n) = self.nodes.get(&at) else { break };
            parts.push(n.name.to_string_lossy().into_owned());
            at = n.parent;
        }
        parts.reverse();
        format!("/{}", parts.join("/"))
    }

    /// The path `name` in `parent` has (or would have).
    pub fn child_path(&self, parent: Ino, name: &OsStr) -> String {
        let p = self.path(parent);
        let sep = if p.ends_with('/') { "" } else { "/" };
        format!("{p}{sep}{}", name.to_string_lossy())
    }

    /// Creates a file, a directory or a symlink (whose target is `data`) as `name` in `parent`.
    pub fn create(
        &mut self,
        parent: Ino,
        name: &OsStr,
        kind: Kind,
        perm: u16,
        owner: (u32, u32),
        data: &[u8],
    ) -> Result<Ino> {
        if self.dir(parent)?.entries.contains_key(name) {
            return Err(libc::EEXIST);
        }
        let ino = self.next_ino;
        self.next_ino += 1;
        let mut node = Node::new(kind, perm, owner.0, owner.1, parent, name.to_owned());
        node.data = data.to_vec();
        self.nodes.insert(ino, node);
        self.set_name(parent, name, Some(ino));
        self.changed(DirChange {
            dir: parent,
            names: vec![(name.to_owned(), Some(ino))],
        });
        Ok(ino)
    }

    /// A second name for a file.
    pub fn link(&mut self, ino: Ino, parent: Ino, name: &OsStr) -> Result<()> {
        if self.dir(parent)?.entries.contains_key(name) {
            return Err(libc::EEXIST);
        }
        let n = self.node_mut(ino)?;
        if n.kind == Kind::Dir {
            return Err(libc::EPERM);
        }
        n.nlink += 1;
        n.parent = parent;
        n.name = name.to_owned();
        n.ctime = SystemTime::now();
        self.set_name(parent, name, Some(ino));
        self.changed(DirChange {
            dir: parent,
            names: vec![(name.to_owned(), Some(ino))],
        });
        Ok(())
    }

    /// Removes a name: `dir` says whether it must name a directory (rmdir) or must not (unlink).
    pub fn remove(&mut self, parent: Ino, name: &OsStr, dir: bool) -> Result<()> {
        let ino = self.lookup(parent, name)?;
        let n = &self.nodes[&ino];
        match (dir, n.kind == Kind::Dir) {
            (true, false) => return Err(libc::ENOTDIR),
            (false, true) => return Err(libc::EISDIR),
            (true, true) if !n.entries.is_empty() => return Err(libc::ENOTEMPTY),
            _ => {}
        }
        self.set_name(parent, name, None);
        self.changed(DirChange {
            dir: parent,
            names: vec![(name.to_owned(), None)],
        });
        self.unref(ino);
        Ok(())
    }

    /// Renames `name` in `parent` to `new_name` in `new_parent`, replacing what is there unless
    /// `noreplace`.
    pub fn rename(
        &mut self,
        parent: Ino,
        name: &OsStr,
        new_parent: Ino,
        new_name: &OsStr,
        noreplace: bool,
    ) -> Result<()> {
        let ino = self.lookup(parent, name)?;
        self.dir(new_parent)?;
        let is_dir = self.nodes[&ino].kind == Kind::Dir;
        let replaced = self.nodes[&new_parent].entries.get(new_name).copied();
        if let Some(old) = replaced {
            if old == ino {
                return Ok(());
            }
            if noreplace {
                return Err(libc::EEXIST);
            }
            let o = &self.nodes[&old];
            match (is_dir, o.kind == Kind::Dir) {
                (true, false) => return Err(libc::ENOTDIR),
                (false, true) => return Err(libc::EISDIR),
                (true, true) if !o.entries.is_empty() => return Err(libc::ENOTEMPTY),
                _ => {}
            }
        }
        if is_dir {
            // A directory cannot move below itself.
            let mut at = new_parent;
            for _ in 0..256 {
                if at == ino {
                    return Err(libc::EINVAL);
                }
                if at == ROOT {
                    break;
                }
                at = self.nodes.get(&at).map_or(ROOT, |n| n.parent);
            }
        }
        self.set_name(parent, name, None);
        self.set_name(new_parent, new_name, Some(ino));
        if parent == new_parent {
            self.changed(DirChange {
                dir: parent,
                names: vec![(name.to_owned(), None), (new_name.to_owned(), Some(ino))],
            });
        } else {
            self.changed(DirChange {
                dir: parent,
                names: vec![(name.to_owned(), None)],
            });
            self.changed(DirChange {
                dir: new_parent,
                names: vec![(new_name.to_owned(), Some(ino))],
            });
        }
        let n = self.nodes.get_mut(&ino).expect("looked up");
        n.parent = new_parent;
        n.name = new_name.to_owned();
        n.ctime = SystemTime::now();
        if let Some(old) = replaced {
            self.unref(old);
        }
        Ok(())
    }

    fn set_name(&mut self, dir: Ino, name: &OsStr, to: Option<Ino>) {
        let d = self
            .nodes
            .get_mut(&dir)
            .expect("a directory checked by the caller");
        match to {
            Some(ino) => d.entries.insert(name.to_owned(), ino),
            None => d.entries.remove(name),
        };
        let now = SystemTime::now();
        d.mtime = now;
        d.ctime = now;
    }

    /// One name fewer: the inode goes when no name and no open handle is left.
    fn unref(&mut self, ino: Ino) {
        let n = self.nodes.get_mut(&ino).expect("a named inode");
        n.nlink = if n.kind == Kind::Dir {
            0
        } else {
            n.nlink.saturating_sub(1)
        };
        n.ctime = SystemTime::now();
        if n.nlink == 0 && n.opens == 0 {
            self.nodes.remove(&ino);
        }
    }

    /// A handle was opened on the inode.
    pub fn open(&mut self, ino: Ino) -> Result<()> {
        self.node_mut(ino)?.opens += 1;
        Ok(())
    }

    /// A handle was released: an unlinked file without handles goes.
    pub fn release(&mut self, ino: Ino) {
        if let Some(n) = self.nodes.get_mut(&ino) {
            n.opens = n.opens.saturating_sub(1);
            if n.nlink == 0 && n.opens == 0 {
                self.nodes.remove(&ino);
            }
        }
    }

    /// Reads up to `len` bytes at `offset`.
    pub fn read(&self, ino: Ino, offset: u64, len: u32) -> Result<&[u8]> {
        let n = self.nodes.get(&ino).ok_or(libc::ENOENT)?;
        if n.kind == Kind::Dir {
            return Err(libc::EISDIR);
        }
        let start = (offset as usize).min(n.data.len());
        let end = start.saturating_add(len as usize).min(n.data.len());
        Ok(&n.data[start..end])
    }

    /// Writes `bytes` at `offset` (a hole before it reads as zeros).
    pub fn write(&mut self, ino: Ino, offset: u64, bytes: &[u8]) -> Result<usize> {
        let n = self.node_mut(ino)?;
        if n.kind != Kind::File {
            return Err(libc::EISDIR);
        }
        let start = offset as usize;
        let end = start + bytes.len();
        if n.data.len() < end {
            n.data.resize(end, 0);
        }
        n.data[start..end].copy_from_slice(bytes);
        if !bytes.is_empty() {
            n.dirty.extend(offset / PAGE..=(end as u64 - 1) / PAGE);
        }
        let now = SystemTime::now();
        n.mtime = now;
        n.ctime = now;
        Ok(bytes.len())
    }

    /// Truncates or extends a file with zeros.
    pub fn set_size(&mut self, ino: Ino, size: u64) -> Result<()> {
        let n = self.node_mut(ino)?;
        if n.kind != Kind::File {
            return Err(libc::EISDIR);
        }
        let old = n.data.len() as u64;
        if size < old {
            // The cut-off bytes are zeros now should the file grow again.
            n.dirty.extend(size / PAGE..=(old - 1) / PAGE);
        }
        n.data.resize(size as usize, 0);
        let now = SystemTime::now();
        n.mtime = now;
        n.ctime = now;
        Ok(())
    }

    /// Changes permission bits and owner (made durable with the inode's next fsync, or with
    /// the inode itself when its name becomes durable first).
    pub fn set_attr(
        &mut self,
        ino: Ino,
        perm: Option<u16>,
        uid: Option<u32>,
        gid: Option<u32>,
    ) -> Result<()> {
        let n = self.node_mut(ino)?;
        if let Some(p) = perm {
            n.perm = p;
        }
        if let Some(u) = uid {
            n.uid = u;
        }
        if let Some(g) = gid {
            n.gid = g;
        }
        n.ctime = SystemTime::now();
        Ok(())
    }

    /// Sets the times a process asked for.
    pub fn set_times(
        &mut self,
        ino: Ino,
        atime: Option<SystemTime>,
        mtime: Option<SystemTime>,
    ) -> Result<()> {
        let n = self.node_mut(ino)?;
        if let Some(t) = atime {
            n.atime = t;
        }
        if let Some(t) = mtime {
            n.mtime = t;
        }
        Ok(())
    }

    /// fsync/fdatasync of a file: its data and size become durable — not its name.
    pub fn fsync(&mut self, ino: Ino) -> Result<()> {
        let n = self.nodes.get_mut(&ino).ok_or(libc::ENOENT)?;
        // After a cut this changes nothing the next boot finds: that disk is frozen.
        let s = self
            .durable
            .nodes
            .entry(ino)
            .or_insert_with(|| Stored::empty(n));
        s.perm = n.perm;
        s.uid = n.uid;
        s.gid = n.gid;
        match n.kind {
            Kind::File => {
                copy_pages(&n.data, &mut s.data, &n.dirty, |_| PageFate::Whole);
                s.data.resize(n.data.len(), 0);
                n.dirty.clear();
            }
            Kind::Symlink => s.data = n.data.clone(),
            Kind::Dir => {}
        }
        Ok(())
    }

    /// fsync of a directory: its entries become durable as they are now; an inode first made
    /// durable this way is empty until it is synced itself.
    pub fn fsyncdir(&mut self, dir: Ino) -> Result<()> {
        let entries = self.dir(dir)?.entries.clone();
        for &ino in entries.values() {
            if !self.durable.nodes.contains_key(&ino) {
                let s = Stored::empty(&self.nodes[&ino]);
                self.durable.nodes.insert(ino, s);
            }
        }
        let d = &self.nodes[&dir];
        let s = self
            .durable
            .nodes
            .entry(dir)
            .or_insert_with(|| Stored::empty(d));
        s.entries = entries;
        self.pending.retain(|c| c.dir != dir);
        Ok(())
    }

    /// Everything becomes durable (sync(2)).
    pub fn sync_all(&mut self) {
        let inos: Vec<Ino> = self.nodes.keys().copied().collect();
        for &ino in &inos {
            let _ = self.fsync(ino);
        }
        for ino in inos {
            if self.nodes[&ino].kind == Kind::Dir {
                let _ = self.fsyncdir(ino);
            }
        }
    }

    /// Whether the power has been cut (and not yet restored by [`Model::boot`]).
    pub fn is_cut(&self) -> bool {
        self.frozen.is_some()
    }

    /// The power is cut now: the disk the next boot finds is fixed — what is durable, and what
    /// `writeback` adds. Later operations change only what processes see. Cutting twice keeps the
    /// first cut.
    pub fn cut(&mut self, writeback: Writeback) {
        if self.frozen.is_some() {
            return;
        }
        let mut disk = self.durable.clone();
        if let Writeback::Random(seed) = writeback {
            let mut rng = Rng::new(seed);
            for c in &self.pending {
                if rng.below(2) == 1 {
                    persist(&mut disk, &self.nodes, c);
                }
            }
            // In inode order, so a seed chooses the same for the same state.
            let mut inos: Vec<&Ino> = self.nodes.keys().collect();
            inos.sort();
            for ino in inos {
                let n = &self.nodes[ino];
                if n.kind != Kind::File
                    || (n.dirty.is_empty()
                        && disk
                            .nodes
                            .get(ino)
                            .is_some_and(|s| s.data.len() == n.data.len()))
                {
                    continue;
                }
                match rng.below(3) {
                    0 => continue,
                    1 => {
                        let s = disk.nodes.entry(*ino).or_insert_with(|| Stored::empty(n));
                        copy_pages(&n.data, &mut s.data, &n.dirty, |_| PageFate::Whole);
                        s.data.resize(n.data.len(), 0);
                    }
                    _ => {
                        let s = disk.nodes.entry(*ino).or_insert_with(|| Stored::empty(n));
                        // The new size may persist without the data (a tail of zeros), or the
                        // data of pages within the old size without the new size.
                        let len = if rng.below(2) == 0 {
                            n.data.len()
                        } else {
                            s.data.len()
                        };
                        copy_pages(&n.data, &mut s.data, &n.dirty, |_| match rng.below(3) {
                            0 => PageFate::Lost,
                            1 => PageFate::Whole,
                            _ => PageFate::Sectors(1 + rng.below(PAGE / SECTOR - 1)),
                        });
                        s.data.resize(len, 0);
                    }
                }
            }
        }
        self.frozen = Some(disk);
    }

    /// A new boot: what processes see becomes what the disk held at the cut (the durable state
    /// when the power was not cut), and whatever no durable name reaches is gone.
    pub fn boot(&mut self) {
        let disk = self.frozen.take().unwrap_or_else(|| self.durable.clone());
        let mut kept = Disk::default();
        let mut nodes = HashMap::new();
        let now = SystemTime::now();
        // Walk from the root; a file with several names is counted once per name.
        let mut stack = vec![(ROOT, ROOT, OsString::new())];
        while let Some((ino, parent, name)) = stack.pop() {
            let Some(s) = disk.nodes.get(&ino) else {
                continue;
            };
            if let Some(n) = nodes.get_mut(&ino) {
                let n: &mut Node = n;
                n.nlink += 1;
                continue;
            }
            let mut n = Node::new(s.kind, s.perm, s.uid, s.gid, parent, name);
            n.data = s.data.clone();
            n.atime = now;
            n.mtime = now;
            n.ctime = now;
            if s.kind == Kind::Dir {
                let mut entries = BTreeMap::new();
                for (child, &c) in &s.entries {
                    // A durable name of an inode the disk never held is no name.
                    if disk.nodes.contains_key(&c) {
                        entries.insert(child.clone(), c);
                        stack.push((c, ino, child.clone()));
                    }
                }
                n.entries = entries;
            }
            nodes.insert(ino, n);
            kept.nodes.insert(ino, s.clone());
        }
        for (ino, s) in kept.nodes.iter_mut() {
            s.entries = nodes[ino].entries.clone();
        }
        self.nodes = nodes;
        self.durable = kept;
        self.pending.clear();
    }
}

impl Node {
    fn new(kind: Kind, perm: u16, uid: u32, gid: u32, parent: Ino, name: OsString) -> Node {
        let now = SystemTime::now();
        Node {
            kind,
            perm,
            uid,
            gid,
            data: Vec::new(),
            entries: BTreeMap::new(),
            nlink: if kind == Kind::Dir { 2 } else { 1 },
            atime: now,
            mtime: now,
            ctime: now,
            parent,
            name,
            opens: 0,
            dirty: BTreeSet::new(),
        }
    }
}

impl Stored {
    fn of(n: &Node) -> Stored {
        Stored {
            kind: n.kind,
            perm: n.perm,
            uid: n.uid,
            gid: n.gid,
            data: n.data.clone(),
            entries: n.entries.clone(),
        }
    }

    /// The inode as it is first stored: a symlink with its target, anything else empty.
    fn empty(n: &Node) -> Stored {
        Stored {
            kind: n.kind,
            perm: n.perm,
            uid: n.uid,
            gid: n.gid,
            data: if n.kind == Kind::Symlink {
                n.data.clone()
            } else {
                Vec::new()
            },
            entries: BTreeMap::new(),
        }
    }
}

/// Applies a change of names to `disk`; an inode first stored this way is empty.
fn persist(disk: &mut Disk, nodes: &HashMap<Ino, Node>, c: &DirChange) {
    for (name, to) in &c.names {
        if let Some(ino) = to {
            if let (false, Some(n)) = (disk.nodes.contains_key(ino), nodes.get(ino)) {
                disk.nodes.insert(*ino, Stored::empty(n));
            }
        }
        let Some(n) = nodes.get(&c.dir) else { continue };
        let d = disk.nodes.entry(c.dir).or_insert_with(|| Stored::empty(n));
        match to {
            Some(ino) => d.entries.insert(name.clone(), *ino),
            None => d.entries.remove(name),
        };
    }
}

enum PageFate {
    Lost,
    Whole,
    /// Only the first n sectors.
    Sectors(u64),
}

/// Copies each dirty page of `from` into `to` as `fate` says (growing `to` with zeros as needed;
/// bytes past the end of `from` are zeros).
fn copy_pages(
    from: &[u8],
    to: &mut Vec<u8>,
    dirty: &BTreeSet<u64>,
    mut fate: impl FnMut(u64) -> PageFate,
) {
    for &page in dirty {
        let start = page * PAGE;
        let len = match fate(page) {
            PageFate::Lost => continue,
            PageFate::Whole => PAGE,
            PageFate::Sectors(n) => n * SECTOR,
        };
        let end = start + len;
        let (s, e) = (start as usize, end as usize);
        if to.len() < e {
            to.resize(e, 0);
        }
        for (i, b) in to[s..e].iter_mut().enumerate() {
            *b = from.get(s + i).copied().unwrap_or(0);
        }
    }
}

/// splitmix64: small, seedable, and the same on every platform.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (`n` > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
