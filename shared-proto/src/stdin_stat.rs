//! How `irs run` tells the runtime what standard input was when it serves a regular file's
//! bytes from an in-memory copy (DESIGN §4 "Inputs"): the original's `struct stat`, as a
//! comma-separated list of its fields in [`ENV_STDIN_STAT`]; `fstat` on the copy answers it
//! (`irs-runtime/src/program/input_stat.rs`).

/// The variable holding the description.
pub const ENV_STDIN_STAT: &str = "IRS_STDIN_STAT";

/// The fields of a description, as `irs run` passes them.
const FIELDS: usize = 16;

/// `st` as the text of [`ENV_STDIN_STAT`].
pub fn encode(st: &libc::stat) -> String {
    let v: [i128; FIELDS] = [
        st.st_dev as i128, st.st_ino as i128, st.st_mode as i128, st.st_nlink as i128, st.st_uid as i128, st.st_gid as i128,
        st.st_rdev as i128, st.st_size as i128, st.st_blksize as i128, st.st_blocks as i128, st.st_atime as i128, st.st_atime_nsec as i128,
        st.st_mtime as i128, st.st_mtime_nsec as i128, st.st_ctime as i128, st.st_ctime_nsec as i128,
    ];
    v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
}

/// The description [`encode`] wrote (`None`: not one).
pub fn decode(text: &str) -> Option<libc::stat> {
    let v: Vec<i64> = text.split(',').map(|x| x.trim().parse().ok()).collect::<Option<_>>()?;
    if v.len() != FIELDS {
        return None;
    }
    // SAFETY: a plain C struct; every field is set below or zero.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    st.st_dev = v[0] as _;
    st.st_ino = v[1] as _;
    st.st_mode = v[2] as _;
    st.st_nlink = v[3] as _;
    st.st_uid = v[4] as _;
    st.st_gid = v[5] as _;
    st.st_rdev = v[6] as _;
    st.st_size = v[7] as _;
    st.st_blksize = v[8] as _;
    st.st_blocks = v[9] as _;
    st.st_atime = v[10] as _;
    st.st_atime_nsec = v[11] as _;
    st.st_mtime = v[12] as _;
    st.st_mtime_nsec = v[13] as _;
    st.st_ctime = v[14] as _;
    st.st_ctime_nsec = v[15] as _;
    Some(st)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_survives_the_text() {
        // SAFETY: a plain C struct, filled by fstat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let f = std::fs::File::open("/proc/self/exe").unwrap();
        // SAFETY: fstat on a descriptor we own fills `st`.
        assert_eq!(unsafe { libc::fstat(std::os::fd::AsRawFd::as_raw_fd(&f), &mut st) }, 0);
        let back = decode(&encode(&st)).unwrap();
        assert_eq!((back.st_ino, back.st_mode, back.st_size, back.st_mtime, back.st_mtime_nsec), (st.st_ino, st.st_mode, st.st_size, st.st_mtime, st.st_mtime_nsec));
        assert!(decode("1,2,3").is_none() && decode("").is_none());
    }
}
