//! `irs run` without a given prefix: the program runs under IRS (DESIGN §1, §4): its input's
//! verification found or queued, every run under the latest prefix of its input (see
//! `service::session`). Its command line and what it prints, shared by the light `irs` front
//! (which runs it without loading LLVM) and `irs-full`.

use std::io::Write;
use std::path::PathBuf;

/// `irs run`'s options and command.
#[derive(clap::Args, Clone, Debug)]
pub struct RunArgs {
    /// The prefix (from `irs constrain`). Without --prefix or --installed the program runs
    /// under IRS: its background verifier is started (or attached to) and every run follows
    /// the latest prefix it published.
    #[arg(long, conflicts_with = "installed")]
    pub prefix: Option<PathBuf>,
    /// Use the prefix installed for this program (/dev/shm/irs-<program-id>).
    #[arg(long)]
    pub installed: bool,
    /// Under IRS: run the program this many times.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub repeat: u64,
    /// Under IRS: seconds between runs.
    #[arg(long, default_value_t = 0.0)]
    pub every: f64,
    /// Under IRS: when no verification covers the run's input yet, do not wait for its
    /// first prefix: react at once (--divergence).
    #[arg(long)]
    pub no_wait: bool,
    /// Under IRS: how long to wait for the first prefix of an input no verification covers
    /// yet, in seconds; 0 is --no-wait (the run reacts at once, --divergence). A wait that
    /// reaches the limit ends `irs run` with an error.
    #[arg(long, default_value_t = 600.0)]
    pub wait_limit: f64,
    /// Inject random short delays and yields at callbacks (to shake schedules in tests).
    #[arg(long)]
    pub chaos: bool,
    /// What a run does where no verification covers it (it leaves the verified trace, or
    /// its input is not verified and --no-wait, or cannot be captured): serial (the rest
    /// runs one thread at a time by the verifier's default policy: deterministic and
    /// replayable, not verified), stop (abort; or do not start), free (the rest runs
    /// unconstrained and is reported unverified).
    #[arg(long, default_value = "serial", value_parser = ["serial", "stop", "free"])]
    pub divergence: String,
    /// Under IRS: which environment variables are part of the input: read (the ones the
    /// program reads, found by its verification, and the C library's own: LANG, LC_*,
    /// TZ, ...), all (every one but irs's own IRS_*) or a comma-separated list of names.
    #[arg(long, default_value = "read")]
    pub env: String,
    /// Under IRS: standard input longer than this many bytes is not captured (the run is
    /// then not covered by any verification).
    #[arg(long, default_value_t = crate::service::input::DEFAULT_CAPTURE_LIMIT)]
    pub capture_limit: u64,
    /// Under IRS: which execution the verifier cuts the prefixes from (`irs verify --publish
    /// --anchor`): default (the default policy's, each thread as long as it can), natural (the
    /// program's own order of events, from one isolated run with real threads) or auto (both,
    /// timed: the cheaper one). Taken by the background worker this run starts; one already at
    /// work keeps its own.
    #[arg(long, default_value = "auto", value_parser = crate::service::anchor::Anchor::NAMES)]
    pub anchor: String,
    /// The program (built by `irs cc`) and its arguments, after `--`.
    #[arg(required = true, last = true)]
    pub command: Vec<String>,
}

impl RunArgs {
    /// Without --prefix or --installed the program runs under IRS.
    pub fn under_irs(&self) -> bool {
        self.prefix.is_none() && !self.installed
    }
}

/// `irs run ARGS` as the light front sees it (ARGS after `run`), when it runs under IRS: the
/// parsed options, or `None` for anything else (given a prefix, help, or anything this parser
/// does not take as clap would: `irs-full` parses it with clap and says what is wrong).
///
/// Parsed by hand, without clap: building clap's parser costs more than the rest of the
/// front's start. It takes the long options of [`RunArgs`] (`--name value`, `--name=value`),
/// each at most once, then `--` and the command; a value is parsed as clap's parser for that
/// option does, and a separate value that starts with `-` is left to clap.
pub fn parse_front(args: &[std::ffi::OsString]) -> Option<RunArgs> {
    let mut run = RunArgs {
        prefix: None,
        installed: false,
        repeat: 1,
        every: 0.0,
        no_wait: false,
        wait_limit: 600.0,
        chaos: false,
        divergence: "serial".into(),
        env: "read".into(),
        capture_limit: crate::service::input::DEFAULT_CAPTURE_LIMIT,
        anchor: "auto".into(),
        command: Vec::new(),
    };
    let mut seen: Vec<&str> = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let arg = arg.to_str()?;
        if arg == "--" {
            run.command = it.map(|a| a.to_str().map(str::to_string)).collect::<Option<_>>()?;
            break;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (arg, None),
        };
        if seen.contains(&name) {
            return None;
        }
        seen.push(name);
        match name {
            "--no-wait" if inline.is_none() => run.no_wait = true,
            "--chaos" if inline.is_none() => run.chaos = true,
            "--repeat" | "--every" | "--wait-limit" | "--divergence" | "--env" | "--capture-limit" | "--anchor" => {
                let value = match inline {
                    Some(v) => v,
                    None => it.next()?.to_str().filter(|v| !v.starts_with('-'))?,
                };
                if value.is_empty() {
                    return None;
                }
                match name {
                    "--repeat" => run.repeat = value.parse().ok().filter(|&n| n >= 1)?,
                    "--every" => run.every = value.parse().ok()?,
                    "--wait-limit" => run.wait_limit = value.parse().ok()?,
                    "--divergence" => run.divergence = ["serial", "stop", "free"].into_iter().find(|&d| d == value)?.into(),
                    "--env" => run.env = value.into(),
                    "--anchor" => run.anchor = crate::service::anchor::Anchor::parse(value)?.name().into(),
                    _ => run.capture_limit = value.parse().ok()?,
                }
            }
            _ => return None,
        }
    }
    Some(run).filter(|r| !r.command.is_empty() && r.under_irs())
}

/// Print `line` on standard error in one write (unbuffered, `eprintln!` writes each piece of
/// its format apart: a dozen system calls for a line, on the path of every `irs run`).
fn say(line: std::fmt::Arguments) {
    let mut text = line.to_string();
    text.push('\n');
    let _ = std::io::stderr().write_all(text.as_bytes());
}

fn fail(msg: impl std::fmt::Display) -> u8 {
    say(format_args!("irs: {msg}"));
    2
}

fn exit_code(code: i32) -> u8 {
    code.clamp(0, 255) as u8
}

/// Run the program under IRS as `args` say, printing a line per run; the exit status of
/// `irs run` (the program's, or 2 when `irs run` fails).
pub fn run_under_irs(args: RunArgs) -> u8 {
    let RunArgs { repeat, every, no_wait, wait_limit, chaos, divergence, env, capture_limit, anchor, command, .. } = args;
    let (program, args) = command.split_first().expect("clap requires a program");
    if !(every >= 0.0 && every.is_finite() && wait_limit >= 0.0 && wait_limit.is_finite()) {
        return fail("run: --every and --wait-limit must be non-negative numbers of seconds");
    }
    // Waiting at most 0 s for the first prefix is not waiting: react at once.
    let no_wait = no_wait || wait_limit == 0.0;
    let env = match crate::service::input::EnvSelection::parse(&env) {
        Ok(e) => e,
        Err(e) => return fail(format_args!("run: {e}")),
    };
    let opts = crate::service::RunOptions {
        repeat,
        every: std::time::Duration::from_secs_f64(every),
        no_wait,
        wait_limit: std::time::Duration::from_secs_f64(wait_limit),
        chaos,
        reaction: crate::service::Reaction::parse(&divergence).expect("clap checks the values"),
        env,
        capture_limit,
        anchor: crate::service::anchor::Anchor::parse(&anchor).expect("clap checks the values"),
    };
    let session = crate::service::Session::attach(program, args, &opts, |a| match a {
        crate::service::Attach::Verified { key, status: crate::service::Status::Finished(s) } => {
            say(format_args!("irs: input {key} of {program}: verification finished ({})", s.verdict.as_deref().unwrap_or("?")))
        }
        crate::service::Attach::Verified { key, status } => say(format_args!("irs: input {key} of {program}: verifier {}", status.word())),
        crate::service::Attach::Queued { key, worker_started } => say(format_args!(
            "irs: input {key} of {program} is not verified yet: queued for verification{}{}",
            if worker_started.is_some() { " (background verifier started)" } else { "" },
            if opts.no_wait { "" } else { "; waiting for its first prefix" }
        )),
        crate::service::Attach::Uncoverable(why) => say(format_args!("irs: no verification can cover this run: {why}")),
    });
    let session = match session {
        Ok(s) => s,
        Err(e) => return fail(format_args!("run: {e}")),
    };
    if opts.repeat == 1 {
        match session.in_place() {
            Ok(Some(run)) => {
                let st = run.verifier.clone().unwrap_or_default();
                say(format_args!(
                    "irs run 1/1: in place of irs (its exit status is the program's own) | {} constraints in force | traces explored {} | relaxations {} | violations found {}",
                    run.prefix.constraints,
                    st.traces,
                    st.published.saturating_sub(1),
                    st.violations.len()
                ));
                return fail(format_args!("run: {}", run.exec()));
            }
            Ok(None) => {}
            Err(e) => return fail(format_args!("run: {e}")),
        }
    }
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut last = 0;
    let result = crate::service::run_session(&session, &opts, |r| {
        last = crate::launch::exit_code(r.status);
        let st = r.state.clone().unwrap_or_default();
        let line = format!(
            "irs run {}/{repeat}: {} in {:.1} ms | {} | traces explored {} | relaxations {} | violations found {}",
            r.index + 1,
            crate::launch::describe(r.status),
            r.micros as f64 / 1000.0,
            match &r.coverage {
                crate::service::Coverage::Verified(p) => format!("{} constraints in force", p.constraints),
                crate::service::Coverage::Serialised(_) => "SERIALISED (not verified)".into(),
                crate::service::Coverage::Unverified(_) => "UNVERIFIED".into(),
            },
            st.traces,
            st.published.saturating_sub(1),
            st.violations.len()
        );
        if tty {
            eprint!("\r{line}   ");
        } else {
            say(format_args!("{line}"));
        }
        if let Some(left) = &r.left {
            if tty {
                say(format_args!(""));
            }
            say(format_args!("irs: run {}: {left}", r.index + 1));
        }
    });
    if tty {
        say(format_args!(""));
    }
    match result {
        Ok(runs) => {
            let not_verified = runs.iter().filter(|r| r.constraints().is_none() || r.left.is_some()).count();
            if not_verified > 0 {
                let why = runs.iter().find_map(|r| match &r.coverage {
                    crate::service::Coverage::Serialised(w) | crate::service::Coverage::Unverified(w) => Some(w.clone()),
                    crate::service::Coverage::Verified(_) => None,
                });
                say(format_args!("irs: warning: {not_verified} of {} runs were not verified{}", runs.len(), why.map(|w| format!(" ({w})")).unwrap_or_default()));
            }
            exit_code(last)
        }
        Err(e) => fail(format_args!("run: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What clap makes of `irs run ARGS`, as `irs-full` parses it.
    fn clap_parse(args: &[&str]) -> Option<RunArgs> {
        #[derive(clap::Parser)]
        struct Front {
            #[command(flatten)]
            run: RunArgs,
        }
        <Front as clap::Parser>::try_parse_from(std::iter::once("irs run").chain(args.iter().copied())).ok().map(|f| f.run)
    }

    #[test]
    fn the_hand_parser_takes_what_clap_takes_and_leaves_the_rest_to_it() {
        let os = |args: &[&str]| args.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        let taken: &[&[&str]] = &[
            &["--", "./p"],
            &["--", "./p", "--repeat", "3", "-x"],
            &["--repeat", "3", "--every", "0.5", "--", "./p", "a"],
            &["--repeat=3", "--every=0.5", "--no-wait", "--chaos", "--", "./p"],
            &["--wait-limit", "0", "--divergence", "stop", "--env", "A,B", "--capture-limit", "10", "--", "p"],
            &["--divergence=free", "--env=all", "--", "p"],
            &["--every=-1", "--", "p"],
            &["--every", "inf", "--", "p"],
            &["--repeat", "+2", "--", "p"],
        ];
        for args in taken {
            let ours = parse_front(&os(args)).map(|r| format!("{r:?}"));
            assert!(ours.is_some(), "{args:?}");
            assert_eq!(ours, clap_parse(args).map(|r| format!("{r:?}")), "{args:?}");
        }
        // An error, help, a prefix, or an option it does not know: clap's to parse.
        let left: &[&[&str]] = &[
            &["--repeat", "0", "--", "p"],
            &["--repeat", "-1", "--", "p"],
            &["--repeat", "x", "--", "p"],
            &["--repeat", "3", "--repeat", "4", "--", "p"],
            &["--divergence", "loose", "--", "p"],
            &["--env", "--", "p"],
            &["--env=", "--", "p"],
            &["--no-wait=1", "--", "p"],
            &["--prefix", "x.prefix", "--", "p"],
            &["--installed", "--", "p"],
            &["--help"],
            &["-h", "--", "p"],
            &["--bogus", "--", "p"],
            &["./p"],
            &["--"],
            &[],
        ];
        for args in left {
            assert!(parse_front(&os(args)).is_none(), "{args:?}");
        }
    }
}
