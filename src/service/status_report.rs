//! `irs status` (DESIGN §4 "Publishing" and "Inputs"): every input of a program seen so far with
//! its verifier's state, verdict and the constraints in force, the queue, the background worker,
//! and which input is the command's own (its arguments, environment and standard input, taken as
//! `irs run` takes them).

use super::input::{self, EnvSelection, Input, InputKey, StdinCapture};
use super::store::ProgramStore;
use super::{inputs, queue, worker, InputReport, ServiceError, Status};
use shared_proto::ProgramId;
use std::fmt::Write;

pub struct StatusReport {
    pub id: ProgramId,
    /// The command's own input, and a note when it could not be taken whole.
    pub this: Option<InputKey>,
    pub note: Option<String>,
    pub inputs: Vec<InputReport>,
    pub queue: Vec<InputKey>,
    pub worker: bool,
}

/// How the verification of `program` stands, for the input `args` (with this process's
/// environment and standard input).
pub fn status_report(program: &str, args: &[String], env: EnvSelection) -> Result<StatusReport, ServiceError> {
    let id = super::program_id(program, args)?;
    let (stdin, note) = match input::capture_stdin(input::DEFAULT_CAPTURE_LIMIT)? {
        StdinCapture::Captured(b) => (Some(b), None),
        StdinCapture::Uncapturable { why, .. } => (None, Some(why)),
    };
    let program = ProgramStore::of(id);
    // Which input the files on disk make it (as `irs run` finds it; `files`).
    let this = stdin.map(|b| {
        let base = Input::new(args, Input::current_env(), env, &b);
        match super::files::find(&program, base.clone(), input::DEFAULT_CAPTURE_LIMIT) {
            Ok(super::files::Found::Stored(i)) | Ok(super::files::Found::New { input: i, .. }) => i.key(),
            Err(_) => base.key(),
        }
    });
    Ok(StatusReport { id, this, note, inputs: inputs(id), queue: queue::queued(&program), worker: worker::running(&program) })
}

/// The variables the verification of `i` read, as `NAME="value"` or `NAME unset`.
fn env_read(i: &InputReport) -> Vec<String> {
    super::files::env_captures(&i.store)
        .list()
        .into_iter()
        .map(|(n, v)| {
            let n = String::from_utf8_lossy(&n);
            match v {
                None => format!("{n} unset"),
                Some(v) => format!("{n}={:?}", String::from_utf8_lossy(&v)),
            }
        })
        .collect()
}

impl StatusReport {
    fn this_input(&self) -> Option<&InputReport> {
        self.inputs.iter().find(|i| Some(i.store.key) == self.this)
    }

    pub fn json(&self) -> serde_json::Value {
        let one = |i: &InputReport| {
            serde_json::json!({
                "key": i.store.key.to_string(),
                "this": Some(i.store.key) == self.this,
                "input": i.input,
                "status": i.status.word(),
                "state": i.status.state(),
                "queued": i.queued,
                "constraints_in_force": i.in_force.as_ref().map(|p| p.constraints),
                "segment": i.store.segment(),
                "files_read": i.store.captures().summary(),
                "env_read": env_read(i),
                "env_whole": super::files::env_captures(&i.store).whole(),
                "files_dir": i.store.files_dir(),
            })
        };
        let this = self.this_input();
        serde_json::json!({
            "program_id": self.id.to_string(),
            "this_input": self.this.map(|k| k.to_string()),
            // The command's own input, as before inputs were told apart.
            "status": this.map_or("none", |i| i.status.word()),
            "state": this.and_then(|i| i.status.state()),
            "constraints_in_force": this.and_then(|i| i.in_force.as_ref().map(|p| p.constraints)),
            "segment": this.map(|i| i.store.segment()),
            "inputs": self.inputs.iter().map(one).collect::<Vec<_>>(),
            "queue": self.queue.iter().map(|k| k.to_string()).collect::<Vec<_>>(),
            "worker_running": self.worker,
        })
    }

    pub fn text(&self, program: &str) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "program {program} (id {}): {} input(s); queue: {}; background verifier: {}",
            self.id,
            self.inputs.len(),
            if self.queue.is_empty() { "empty".to_string() } else { self.queue.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ") },
            if self.worker { "working" } else { "idle" }
        );
        if let Some(n) = &self.note {
            let _ = writeln!(out, "  (this command's input is not known: {n})");
        } else if self.this_input().is_none() {
            let _ = writeln!(out, "  this command's input ({}) has not been seen: no verification covers it", self.this.map(|k| k.to_string()).unwrap_or_default());
        }
        for i in &self.inputs {
            let mark = if Some(i.store.key) == self.this { "* " } else { "  " };
            let what = i.input.as_ref().map_or("(unreadable input)".to_string(), Input::describe);
            let _ = writeln!(out, "{mark}input {}{}: {what}", i.store.key, if mark == "* " { " (this command's input)" } else { "" });
            let read = i.store.captures().summary();
            if !read.is_empty() {
                let _ = writeln!(out, "    files its verification read: {}", read.join(", "));
            }
            if super::files::env_captures(&i.store).whole() {
                let _ = writeln!(out, "    its verification found that the program reads its environment whole (environ): every variable is part of this input");
            } else if !env_read(i).is_empty() {
                let _ = writeln!(out, "    environment variables its verification read: {}", env_read(i).join(" "));
            }
            let st = i.status.state().cloned().unwrap_or_default();
            let verifier = match &i.status {
                Status::None if i.queued => "queued, not started".to_string(),
                Status::None => "not started".to_string(),
                Status::Stale(s) => format!(
                    "STALE (its verifier died {} s ago; the last published prefix stays in force){}",
                    super::state::now_unix().saturating_sub(s.updated),
                    if i.queued { "; queued again" } else { "; the next `irs run` queues it again" }
                ),
                s => format!("{} (pid {})", s.word(), st.pid),
            };
            let _ = writeln!(out, "    verifier {verifier}; executions {}, traces {}, SSB {} in {:.1} s", st.executions, st.traces, st.ssb, st.seconds);
            let _ = writeln!(
                out,
                "    prefixes published {}; constraints in force: {}",
                i.in_force.as_ref().map_or(0, |p| p.published),
                i.in_force.as_ref().map_or("none (no prefix: runs on this input are not verified)".to_string(), |p| p.constraints.to_string())
            );
            if let Some(a) = &st.anchor {
                let _ = writeln!(out, "    anchor: {a}");
            }
            if let Some(v) = &st.verdict {
                let _ = writeln!(out, "    verdict: {v}{}", st.covers.as_ref().map(|c| format!(" (covers {c})")).unwrap_or_default());
            }
            for v in &st.violations {
                let _ = writeln!(out, "    found: {v} (schedules in {})", i.store.bugs_dir().display());
            }
            if let Some(e) = &st.error {
                let _ = writeln!(out, "    error: {e}");
            }
        }
        out
    }
}

