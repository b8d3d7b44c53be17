//! The messages between the executor (irs-verifier) and an instrumented program's fork server
//! (irs-runtime, EXPLORE mode), over two pipes (DESIGN §7). Each message is a little-endian u32
//! length and a bincode body; lengths are bounded so a broken peer cannot make us allocate
//! without limit.

use crate::ids::ProgramId;
use crate::site::SiteInfo;
use crate::symbolizer::GlobalRange;
use crate::SiteId;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::io::{Read, Write};

/// Environment variables the executor sets for the fork server.
pub const ENV_CONTROL_IN: &str = "IRS_CONTROL_IN";
pub const ENV_CONTROL_OUT: &str = "IRS_CONTROL_OUT";
pub const ENV_BUFFER_FD: &str = "IRS_BUFFER_FD";
pub const ENV_BUFFER_BYTES: &str = "IRS_BUFFER_BYTES";
pub const ENV_STDIN_FD: &str = "IRS_STDIN_FD";
pub const ENV_STACK_KB: &str = "IRS_STACK_KB";

const MAX_MESSAGE: u32 = 64 << 20;

/// The fork server's first message: who it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    pub program_id: ProgramId,
    pub argv: Vec<String>,
    pub sites: Vec<(SiteId, SiteInfo)>,
    pub globals: Vec<GlobalRange>,
    /// Problems with the program's embedded tables, for the executor to report.
    pub problems: Vec<String>,
}

/// Run one execution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// Thread ids to follow, one per scheduling decision; then the default policy.
    pub schedule: Vec<u32>,
    /// Kill the execution after this long.
    pub timeout_ms: u64,
    /// After the schedule, choose uniformly at random among the enabled threads (seeded)
    /// instead of by the default policy.
    pub random_seed: Option<u64>,
}

/// How the execution's process ended, as the fork server saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProcessEnd {
    Exited(i32),
    Signaled(i32),
    TimedOut,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    pub end: ProcessEnd,
    /// What the execution printed on stdout and stderr (at most 64 KiB).
    pub output: Vec<u8>,
    /// Time from fork to the end of the execution, in microseconds.
    pub micros: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    #[error("the peer closed the channel")]
    Closed,
    #[error("channel error: {0}")]
    Io(#[from] std::io::Error),
    #[error("malformed message: {0}")]
    Malformed(String),
}

pub fn send<T: Serialize>(w: &mut impl Write, msg: &T) -> Result<(), ProtocolError> {
    let body = crate::codec::encode(msg);
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_le_bytes());
    frame.extend_from_slice(&body);
    w.write_all(&frame)?;
    w.flush()?;
    Ok(())
}

pub fn receive<T: DeserializeOwned>(r: &mut impl Read) -> Result<T, ProtocolError> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(ProtocolError::Closed),
        other => other?,
    }
    let len = u32::from_le_bytes(len);
    if len > MAX_MESSAGE {
        return Err(ProtocolError::Malformed(format!("{len}-byte message")));
    }
    let mut body = vec![0u8; len as usize];
    r.read_exact(&mut body)?;
    crate::codec::decode(&body).map_err(|e| ProtocolError::Malformed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_bad_frames_are_rejected() {
        let mut wire = Vec::new();
        let req = Request { schedule: vec![0, 1, 1], timeout_ms: 10_000, random_seed: Some(3) };
        send(&mut wire, &req).unwrap();
        assert_eq!(receive::<Request>(&mut wire.as_slice()).unwrap(), req);
        assert!(matches!(receive::<Request>(&mut &wire[..3]), Err(ProtocolError::Closed)));
        assert!(matches!(receive::<Request>(&mut &[0xff, 0xff, 0xff, 0xff][..]), Err(ProtocolError::Malformed(_))));
        let mut short = wire.clone();
        short.truncate(wire.len() - 1);
        assert!(receive::<Request>(&mut short.as_slice()).is_err());
    }
}
