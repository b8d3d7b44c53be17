//! What an explored execution's view of the file system is made of (DESIGN §7, "an explored
//! execution does no harm"): read from `/proc/self/mountinfo`, one entry per mount the process
//! can see, each with how the private view mirrors it. Pure data: no system call here, so that
//! the rules are tested on mount tables of machines other than this one.
//!
//! - A file system that holds data (ext4, xfs, btrfs, tmpfs, overlay, network and FUSE file
//!   systems, ...) and is mounted writable becomes an *overlay*: reads see it as it is, every
//!   change lands in an upper layer of the view's own, discarded with it.
//! - `proc` is mounted anew (it shows the isolated process-id namespace), with its writable
//!   kernel knobs (`/proc/sys`, `/proc/sysrq-trigger`, ...) read-only.
//! - Every other kernel file system (sysfs, cgroups, devtmpfs, mqueue, debugfs, ...) and every
//!   read-only mount is bound *read-only*. `devpts` is bound as it is: a pseudo-terminal opened
//!   by an execution ends with it.
//! - Mounts the process cannot reach (covered by another mount at the same place, or below
//!   one) and mounts inside the sandbox's own directory are left out.
//!
//! It must never plan a writable view of anything outside the sandbox: a kind it does not know
//! is treated as data (an overlay); a writable mount that cannot be overlaid stops the verifier.

/// How the view mirrors one mount.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mirror {
    /// Reads see the mount; writes go to a private upper layer.
    Overlay,
    /// A fresh `proc` of the isolated namespaces.
    Proc,
    /// The mount itself, read-only.
    ReadOnly,
    /// The mount itself, as it is (pseudo-terminals only).
    Bind,
}

/// One mount of the view, in an order where every mount comes after the one it sits on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedMount {
    /// Where it is mounted (absolute, as the program sees it).
    pub path: String,
    pub fstype: String,
    pub mirror: Mirror,
    /// The mount's own flags to keep on a read-only bind (`MS_NOSUID`, `MS_NODEV`,
    /// `MS_NOEXEC`, ...): a bind may not drop them.
    pub flags: u64,
}

/// One line of `/proc/self/mountinfo`.
#[derive(Clone, Debug)]
struct Entry {
    id: u64,
    parent: u64,
    path: String,
    options: String,
    fstype: String,
}

/// Kernel file systems that hold no user data: bound read-only.
const PSEUDO: &[&str] = &[
    "sysfs", "cgroup", "cgroup2", "devtmpfs", "mqueue", "debugfs", "tracefs", "securityfs", "pstore", "bpf",
    "configfs", "fusectl", "binfmt_misc", "hugetlbfs", "autofs", "efivarfs", "selinuxfs", "nsfs", "rpc_pipefs",
];

/// Undo the octal escapes (`\040` for a space, ...) of a mountinfo path.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_line(line: &str) -> Option<Entry> {
    let (left, right) = line.split_once(" - ")?;
    let f: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    if f.len() < 6 || r.is_empty() {
        return None;
    }
    Some(Entry { id: f[0].parse().ok()?, parent: f[1].parse().ok()?, path: unescape(f[4]), options: f[5].to_string(), fstype: r[0].to_string() })
}

/// `MS_*` flags of a mount's per-mount options that a bind of it must keep.
fn kept_flags(options: &str) -> u64 {
    let mut flags = 0u64;
    for o in options.split(',') {
        flags |= match o {
            "nosuid" => libc::MS_NOSUID,
            "nodev" => libc::MS_NODEV,
            "noexec" => libc::MS_NOEXEC,
            "noatime" => libc::MS_NOATIME,
            "nodiratime" => libc::MS_NODIRATIME,
            "relatime" => libc::MS_RELATIME,
            _ => 0,
        } as u64;
    }
    flags
}

fn is_below(path: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    path == dir || (path.starts_with(dir) && path.as_bytes().get(dir.len()) == Some(&b'/')) || dir.is_empty()
}

/// The view of the mounts in `mountinfo` (the text of `/proc/self/mountinfo`), leaving out
/// `sandbox` (the sandbox's own directory) and everything below it.
pub fn plan(mountinfo: &str, sandbox: &str) -> Vec<PlannedMount> {
    let entries: Vec<Entry> = mountinfo.lines().filter_map(parse_line).collect();
    let by_id = |id: u64| entries.iter().find(|e| e.id == id);
    // Covered: another mount sits at the same place on top of it.
    let covered = |e: &Entry| entries.iter().any(|o| o.parent == e.id && o.path == e.path && o.id != e.id);
    // The mount an entry sits on, passing over mounts stacked at the same place.
    let base = |e: &Entry| {
        let mut p = by_id(e.parent);
        while let Some(q) = p {
            if q.path != e.path || q.id == e.id {
                break;
            }
            p = by_id(q.parent);
        }
        p.filter(|q| q.path != e.path)
    };
    // Reachable: not covered, and sitting on a reachable mount (the root sits on nothing).
    // mountinfo does not list a mount after the one it sits on, so follow the chain.
    let reachable = |e: &Entry| {
        let mut cur = e;
        for _ in 0..entries.len() + 1 {
            if covered(cur) {
                return false;
            }
            if cur.path == "/" {
                return true;
            }
            match base(cur) {
                Some(p) => cur = p,
                None => return false,
            }
        }
        false
    };
    let mut out: Vec<PlannedMount> = Vec::new();
    for e in &entries {
        if (sandbox.len() > 1 && is_below(&e.path, sandbox)) || !reachable(e) {
            continue;
        }
        // Below a fresh proc, the old one's mounts have no place.
        if e.path != "/proc" && is_below(&e.path, "/proc") && entries.iter().any(|p| p.path == "/proc" && p.fstype == "proc") {
            continue;
        }
        let read_only = e.options.split(',').any(|o| o == "ro");
        let mirror = match e.fstype.as_str() {
            "proc" => Mirror::Proc,
            "devpts" => Mirror::Bind,
            t if PSEUDO.contains(&t) => Mirror::ReadOnly,
            _ if read_only => Mirror::ReadOnly,
            _ => Mirror::Overlay,
        };
        out.push(PlannedMount { path: e.path.clone(), fstype: e.fstype.clone(), mirror, flags: kept_flags(&e.options) });
    }
    // The root first, then every mount after the one it sits on (mountinfo lists mounts in
    // the order they were made, which a move can break: sort by depth, stably).
    out.sort_by_key(|m| if m.path == "/" { 0 } else { m.path.matches('/').count() });
    out
}

/// Kernel knobs under a fresh `/proc` that a process of the view must not write (they act on
/// the whole machine): bound read-only over themselves where they exist.
pub const PROC_READ_ONLY: &[&str] = &["sys", "sysrq-trigger", "irq", "bus", "fs", "kcore"];

#[cfg(test)]
mod tests {
    use super::*;

    const MACHINE: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
23 27 0:22 / /sys rw,relatime - sysfs sysfs rw
24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=12334432k,nr_inodes=3083608,mode=755
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683656k
26 24 0:24 / /dev/pts rw,relatime - devpts devpts rw,mode=600,ptmxmode=000
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
28 27 0:25 / /mnt/tools\\040dir ro,nosuid,nodev,relatime - tmpfs tools ro,size=4k,mode=755
29 26 0:26 / /dev/pts rw,relatime - devpts devpts rw,mode=600,ptmxmode=000
30 25 0:27 / /dev/shm rw,nosuid,relatime - tmpfs tmpfs rw,size=24683656k
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
40 22 0:40 / /proc/sys/fs/binfmt_misc rw,relatime - binfmt_misc binfmt_misc rw
41 27 0:41 / /tmp/irs-sandbox-1 rw,relatime - tmpfs tmpfs rw
42 41 0:42 / /tmp/irs-sandbox-1/up rw,relatime - tmpfs tmpfs rw
43 27 0:43 / /home rw,relatime - xfs /dev/vdb rw
";

    fn find<'a>(p: &'a [PlannedMount], path: &str) -> Option<&'a PlannedMount> {
        p.iter().find(|m| m.path == path)
    }

    #[test]
    fn writable_data_is_overlaid_and_kernel_file_systems_are_read_only() {
        let p = plan(MACHINE, "/tmp/irs-sandbox-1");
        assert_eq!(p[0].path, "/");
        assert_eq!(p[0].mirror, Mirror::Overlay);
        assert_eq!(find(&p, "/home").unwrap().mirror, Mirror::Overlay);
        assert_eq!(find(&p, "/proc").unwrap().mirror, Mirror::Proc);
        assert_eq!(find(&p, "/sys").unwrap().mirror, Mirror::ReadOnly);
        assert_eq!(find(&p, "/dev").unwrap().mirror, Mirror::ReadOnly);
        assert_eq!(find(&p, "/dev/pts").unwrap().mirror, Mirror::Bind);
        // A tmpfs is data; the read-only one stays read-only, and keeps its flags.
        let tools = find(&p, "/mnt/tools dir").unwrap();
        assert_eq!(tools.mirror, Mirror::ReadOnly);
        assert_eq!(tools.flags & libc::MS_NOSUID as u64, libc::MS_NOSUID as u64);
        // A tmpfs under /sys is mirrored like any data; the cgroups on it are read-only.
        assert_eq!(find(&p, "/sys/fs/cgroup/cpu").unwrap().mirror, Mirror::ReadOnly);
    }

    #[test]
    fn stacked_mounts_are_planned_once_and_the_top_one_wins() {
        let p = plan(MACHINE, "/tmp/irs-sandbox-1");
        assert_eq!(p.iter().filter(|m| m.path == "/dev/shm").count(), 1);
        assert_eq!(p.iter().filter(|m| m.path == "/dev/pts").count(), 1);
        let shm = find(&p, "/dev/shm").unwrap();
        assert_eq!(shm.mirror, Mirror::Overlay);
        assert_eq!(shm.flags & libc::MS_NOSUID as u64, libc::MS_NOSUID as u64, "the top mount's options");
    }

    #[test]
    fn the_sandbox_itself_and_the_old_procs_mounts_are_left_out() {
        let p = plan(MACHINE, "/tmp/irs-sandbox-1");
        assert!(find(&p, "/tmp/irs-sandbox-1").is_none());
        assert!(find(&p, "/tmp/irs-sandbox-1/up").is_none());
        assert!(find(&p, "/proc/sys/fs/binfmt_misc").is_none());
    }

    #[test]
    fn every_mount_comes_after_the_one_it_sits_on() {
        let p = plan(MACHINE, "/tmp/irs-sandbox-1");
        for (i, m) in p.iter().enumerate() {
            for later in &p[i + 1..] {
                assert!(!(is_below(&m.path, &later.path) && m.path != later.path), "{} planned before {}", m.path, later.path);
            }
        }
    }

    #[test]
    fn mounts_below_an_unreachable_mount_are_left_out() {
        // /a is covered by a second mount at /a; /a/b sits on the covered one.
        let info = "1 0 0:1 / / rw - ext4 r rw\n2 1 0:2 / /a rw - tmpfs t rw\n3 2 0:3 / /a/b rw - tmpfs t rw\n4 2 0:4 / /a rw - tmpfs t rw\n";
        let p = plan(info, "/x");
        assert!(find(&p, "/a/b").is_none());
        assert_eq!(p.iter().filter(|m| m.path == "/a").count(), 1);
    }

    #[test]
    fn unknown_lines_are_skipped_and_escapes_decoded() {
        assert!(parse_line("garbage").is_none());
        assert_eq!(unescape("/a\\040b\\011c"), "/a b\tc");
        assert_eq!(unescape("/plain\\"), "/plain\\");
    }
}
