//! The machine stops: every process the test started, and every process those started, is
//! killed. Detached children (a hook's drainer runs in its own process group, and its parent
//! exits) are found because this process is their *subreaper*: orphans of its descendants
//! become its children instead of init's.

use std::io;

/// Makes this process the subreaper of its descendants (`PR_SET_CHILD_SUBREAPER`).
pub fn become_subreaper() -> io::Result<()> {
    // SAFETY: prctl with an integer argument.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The pids of this process's children, from `/proc` (those reparented to it included).
pub fn children() -> Vec<i32> {
    let me = std::process::id() as i32;
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| parent_of(pid) == Some(me))
        .collect()
}

/// The parent pid of `pid` (the field after the parenthesised command name, which may itself
/// hold spaces and parentheses).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Sends SIGKILL to `pids`.
pub fn kill(pids: &[i32]) {
    for &pid in pids {
        // SAFETY: kill(2); a pid that has gone is ESRCH, harmless.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// Reaps `pid` if it has exited; says whether it had.
pub fn reap(pid: i32) -> bool {
    let mut status = 0;
    // SAFETY: waitpid(2) on one pid, without blocking.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    r == pid || (r < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
}
