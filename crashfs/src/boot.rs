//! A new boot id per simulated boot, with no seam in the program under test: the test thread
//! moves into a mount namespace of its own and bind-mounts a regular file over
//! `/proc/sys/kernel/random/boot_id`; the processes it starts inherit the namespace and read the
//! file as the kernel's. The file is rewritten in place at each boot (a rename would leave the
//! bind mount on the old inode).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The kernel's boot id file.
pub const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";

/// Moves the calling thread (and every process and thread it starts afterwards) into a mount
/// namespace of its own in which no mount propagates back, so its mounts are invisible to the
/// rest of the machine and vanish with it.
pub fn private_mount_namespace() -> io::Result<()> {
    // SAFETY: unshare(2) and mount(2) with valid arguments; only this thread is affected.
    unsafe {
        if libc::unshare(libc::CLONE_NEWNS) != 0 {
            return Err(io::Error::last_os_error());
        }
        let root = c"/";
        let flags = libc::MS_REC | libc::MS_PRIVATE;
        if libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The boot id the processes of this mount namespace see.
pub struct BootId {
    file: PathBuf,
    seed: u64,
    boots: u64,
}

impl BootId {
    /// Writes a first boot id (derived from `seed`) to `dir/boot_id` and bind-mounts it over
    /// [`BOOT_ID`]. Call it after [`private_mount_namespace`], or every process of the machine
    /// sees it.
    pub fn bind(dir: &Path, seed: u64) -> io::Result<BootId> {
        let b = BootId {
            file: dir.join("boot_id"),
            seed,
            boots: 0,
        };
        b.write()?;
        let src = std::ffi::CString::new(b.file.as_os_str().as_encoded_bytes())
            .map_err(io::Error::other)?;
        let dst = std::ffi::CString::new(BOOT_ID).expect("no NUL");
        // SAFETY: valid NUL-terminated paths.
        let r = unsafe {
            libc::mount(
                src.as_ptr(),
                dst.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(b)
    }

    /// A new boot: a new id. Returns it.
    pub fn next_boot(&mut self) -> io::Result<String> {
        self.boots += 1;
        self.write()
    }

    fn write(&self) -> io::Result<String> {
        let id = uuid(self.seed, self.boots);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&self.file)?;
        f.write_all(format!("{id}\n").as_bytes())?;
        Ok(id)
    }
}

/// The boot id as this thread's processes read it.
pub fn current() -> io::Result<String> {
    Ok(std::fs::read_to_string(BOOT_ID)?.trim().to_string())
}

/// A version-4-shaped UUID derived from `(seed, n)`.
fn uuid(seed: u64, n: u64) -> String {
    let mut rng = crate::model::Rng::new(seed ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let (a, b) = (rng.next(), rng.next());
    let b = (b & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn boot_ids_differ_per_boot_and_are_shaped_like_the_kernels() {
        let a = super::uuid(7, 0);
        let b = super::uuid(7, 1);
        assert_ne!(a, b);
        assert_eq!(a, super::uuid(7, 0));
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
    }
}
