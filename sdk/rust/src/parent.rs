//! Ending with the process that started us (`SKYJO_PARENT_PID`): a bot never outlives a killed tournament.

use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// Resolves once `pid` is no longer this process's parent or an ancestor of it (a wrapping shell's parent
/// works too). On Linux a pidfd says the moment it exits; elsewhere it is checked every 0.2 s.
pub async fn gone(pid: i32) {
    if let Some(pidfd) = pidfd_open(pid) {
        if !is_ancestor(pid) {
            return; // checked after opening: it cannot have died unseen in between
        }
        // SAFETY: the OwnedFd moves into the AsyncFd, which owns it (open, the same descriptor) until dropped.
        if let Ok(watched) = unsafe { AsyncFd::register_with_interest(pidfd, Interest::READABLE) } {
            let _ = watched.readable().await; // readable once the process has exited
            return;
        }
    }
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    while is_ancestor(pid) {
        tick.tick().await;
    }
}

fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: pidfd_open takes a pid and flags and returns a new file descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd >= 0 {
            // SAFETY: the descriptor was just opened for us and nothing else owns it.
            return Some(unsafe { OwnedFd::from_raw_fd(fd as i32) });
        }
    }
    let _ = pid;
    None
}

/// Whether `pid` is our parent, or (Linux) its parent and so on.
pub fn is_ancestor(pid: i32) -> bool {
    let mut current = std::os::unix::process::parent_id() as i32;
    for _ in 0..64 {
        if current == pid {
            return true;
        }
        if current <= 1 {
            return false;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{current}/stat")) else { return false };
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'
        let Some(ppid) = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)) else {
            return false;
        };
        let Ok(ppid) = ppid.parse() else { return false };
        current = ppid;
    }
    false
}

#[cfg(test)]
mod tests {
    #[test]
    fn our_parent_is_an_ancestor_and_a_stranger_is_not() {
        assert!(super::is_ancestor(std::os::unix::process::parent_id() as i32));
        assert!(!super::is_ancestor(std::process::id() as i32));
    }
}
