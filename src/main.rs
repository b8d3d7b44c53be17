//! `irs`: the one user-facing command. It parses arguments and prints; the work is done by the
//! library crates.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "irs", version, about = "Run concurrent C programs under verified scheduling constraints (iteratively relaxed scheduling)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile and link C like clang, instrumented and linked with irs-runtime.
    ///
    /// Takes the usual cc flags (-O0..3, -g, -I, -D, -std=, -c, -S, -o, -l, -L, several sources,
    /// objects); flags it does not know go to clang unchanged. `--site-report FILE` writes every
    /// memory access and pthread call the pass saw: instrumented or skipped, and why.
    #[command(disable_help_flag = true)]
    Cc {
        /// Arguments as for clang, plus --site-report FILE.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run an instrumented program once and write every visible event to a trace.
    Record {
        /// Where to write the trace.
        #[arg(long, short)]
        out: PathBuf,
        /// The program (built by `irs cc`) and its arguments, after `--`.
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
    /// IRS end to end on a bundled example with a schedule-dependent bug: build it, run it
    /// over and over under IRS while its verifier works, next to the plain build; show the
    /// prefix shrinking, the bug found and replayed, no run under IRS failing; then the fixed
    /// program. Writes a plot (irs-demo.svg) of run time against wall time.
    Demo {
        /// Where to put the example and its outputs.
        #[arg(long, default_value = "target/irs-demo")]
        dir: PathBuf,
    },
    /// Run one controlled execution (EXPLORE mode) following a schedule, and print its trace
    /// and outcome. Exit code: 0 nothing found, 1 violation/crash/deadlock, 2 error.
    Replay {
        /// Schedule file: thread ids separated by commas or newlines, one per step.
        #[arg(long, conflicts_with = "schedule_default", required_unless_present = "schedule_default")]
        schedule: Option<PathBuf>,
        /// Run the policy alone, with no schedule.
        #[arg(long)]
        schedule_default: bool,
        /// How to choose once the schedule is used up: default (keep running the current thread
        /// while it can; fewest preemptions) or round-robin (the next thread at every step).
        #[arg(long, default_value = "default", value_parser = ["default", "round-robin"])]
        policy: String,
        /// The values every call of `__VERIFIER_nondet_*` explores, comma-separated (default
        /// 0,1; each held as the call's type holds it; a `bool`'s are always 0 and 1).
        #[arg(long, value_name = "LIST", value_parser = parse_nondet_values, allow_hyphen_values = true)]
        nondet_values: Option<ValueList>,
        /// SV-COMP's conventions: `abort()` discards the execution (see `irs verify --svcomp`).
        #[arg(long)]
        svcomp: bool,
        /// Check the spin-wait rule: let a watched loop iterate up to K times in a row without
        /// changing anything, then discard the execution, instead of halting the spinning thread
        /// at its first such iteration (the default). Explores more; finds no livelock; the verdict
        /// is at most `bounded`. The bugs found must be the default's.
        #[arg(long, value_name = "K")]
        spin_bound: Option<u32>,
        /// Let a wait on a condition variable return without a signal wherever the exploration
        /// puts it, as POSIX allows and the C library may do (see `irs verify --spurious-wake-ups`).
        #[arg(long)]
        spurious_wake_ups: bool,
        /// Each thread creates at most N threads: its next `pthread_create` ends the run there
        /// (see `irs verify --max-threads`).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        max_threads: Option<u32>,
        /// Save the trace (same format as `irs record`).
        #[arg(long)]
        trace_out: Option<PathBuf>,
        /// Per-execution time limit in seconds.
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
        /// File the program reads on stdin (default: nothing).
        #[arg(long, conflicts_with = "input")]
        stdin: Option<PathBuf>,
        /// Replay on an input `irs run` captured (its key, as `irs status` lists it): its
        /// arguments, environment, working directory, standard input and the files its
        /// verification read.
        #[arg(long, value_name = "KEY")]
        input: Option<String>,
        /// The program (built by `irs cc`) and its arguments, after `--`.
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
    /// Run many controlled executions with random scheduling and report the distinct outcomes;
    /// each violation, crash or deadlock is saved as a schedule file for `irs replay`.
    /// Exit code: 0 nothing found, 1 violation/crash/deadlock, 2 error.
    Explore {
        /// How many executions.
        #[arg(long)]
        random: u64,
        /// Seed of the random choices (execution i uses seed + i).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Per-execution time limit in seconds.
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
        /// Where to write schedule files.
        #[arg(long, default_value = ".")]
        out_dir: PathBuf,
        /// Pause the default execution after this many steps and start every execution from
        /// there (a snapshot: the prefix is not re-run).
        #[arg(long)]
        snapshot_at: Option<usize>,
        /// The values every call of `__VERIFIER_nondet_*` explores, comma-separated (default
        /// 0,1; each held as the call's type holds it; a `bool`'s are always 0 and 1).
        #[arg(long, value_name = "LIST", value_parser = parse_nondet_values, allow_hyphen_values = true)]
        nondet_values: Option<ValueList>,
        /// Fork a process per execution instead of running executions in one persistent
        /// worker that restores its memory after each (slower; for comparison).
        #[arg(long)]
        fork_each: bool,
        /// The program (built by `irs cc`) and its arguments, after `--`.
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
    /// Explore every schedule of a program that matters, by k-partial Quasi-Optimal POR over
    /// its unfolding: each Mazurkiewicz trace of a complete run at least once (exactly once with
    /// --optimal). Reports every violation, crash and deadlock with a schedule file that
    /// `irs replay --schedule FILE` reproduces.
    /// Exit code: 0 nothing found, 1 violation/crash/deadlock, 2 error.
    Verify {
        /// k-partial alternatives: k = 1 is SDPOR-like, larger k blocks fewer executions.
        #[arg(long, conflicts_with = "optimal", value_parser = clap::value_parser!(u64).range(1..))]
        k: Option<u64>,
        /// Optimal exploration (k = ∞): no sleep-set-blocked execution (the default).
        #[arg(long)]
        optimal: bool,
        /// Stop after this many executions (the verdict is then `incomplete`; at least 1).
        #[arg(long)]
        max_executions: Option<u64>,
        /// Stop after this many seconds (the verdict is then `incomplete`).
        #[arg(long)]
        time_limit: Option<f64>,
        /// Stop once the verifier's own memory (resident set) reaches SIZE, e.g. 512M, 4G
        /// (the verdict is then `incomplete`). Default: half the machine's RAM. See
        /// docs/src/verifier-memory.md.
        #[arg(long, value_name = "SIZE", value_parser = parse_memory_limit)]
        memory_limit: Option<u64>,
        /// Stop at the first violation, crash or deadlock found (the verdict is `violation`).
        #[arg(long)]
        first_bug: bool,
        /// Read the program with SV-COMP's conventions: `abort()` ends an execution the program
        /// rules out (as a failed `__VERIFIER_assume` does) instead of being a violation.
        #[arg(long)]
        svcomp: bool,
        /// Check the spin-wait rule: let a watched loop iterate up to K times in a row without
        /// changing anything, then discard the execution, instead of halting the spinning thread
        /// at its first such iteration (the default). Explores more; finds no livelock; the verdict
        /// is at most `bounded`. The bugs found must be the default's.
        #[arg(long, value_name = "K")]
        spin_bound: Option<u32>,
        /// Explore spurious wake-ups: a wait on a condition variable may return without a signal
        /// wherever the exploration puts it, as POSIX allows and the C library may do. Without
        /// it, a verdict on a program that waited on a condition variable names their absence as
        /// a bound (irs's own condition variables never wake spuriously). Not with --publish yet:
        /// a run under irs cannot reproduce a spurious wake-up of the verified trace.
        #[arg(long, conflicts_with = "publish")]
        spurious_wake_ups: bool,
        /// Thread bound, for programs that create threads without end (`while (1)
        /// pthread_create(...)`): each thread creates at most N threads; an execution in which a
        /// thread is about to create one more ends there (as `_exit` would), a cut the verdict
        /// names (`safe-within-bounds`). Counted per creating thread, since creations by
        /// different threads commute. Without it, a program that reaches EXPLORE's 64 threads is
        /// verified again under a default bound of 2.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        max_threads: Option<u32>,
        /// Per-execution time limit in seconds (a run that takes longer does not terminate).
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
        /// Print one JSON object with the results as the last line of stdout.
        #[arg(long)]
        json: bool,
        /// Where to write schedule files of bugs (default: the current directory; with
        /// --input, the input's directory).
        #[arg(long)]
        out_dir: Option<PathBuf>,
        /// Write the schedule of every explored complete execution to this file, one per line.
        #[arg(long)]
        schedules_out: Option<PathBuf>,
        /// Skip-pointer step of the unfolding's object trees.
        #[arg(long, default_value_t = irs_verifier::qpor::DEFAULT_SKIP_STEP, value_parser = clap::value_parser!(u32).range(1..))]
        skip_step: u32,
        /// Start runs from paused executions (snapshots) at every backtracking point with more
        /// than one alternative at least STEPS deeper than the last one, instead of where they
        /// pay for themselves (the default, measured as the exploration goes).
        #[arg(long, value_name = "STEPS", value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "no_snapshots")]
        snapshot_gap: Option<u64>,
        /// Never start runs from paused executions: re-run every prefix from `main`.
        #[arg(long)]
        no_snapshots: bool,
        /// Prune the unfolding to Q(C,D) once it holds this many events (and has doubled since).
        #[arg(long, default_value_t = irs_verifier::qpor::DEFAULT_PRUNE_AT)]
        prune_at: usize,
        /// Make every memory word an object of the exploration from the start, instead of only
        /// the words found racy (the traces counted are the same; this is slower).
        #[arg(long)]
        no_race_free_words: bool,
        /// Which executions count as one trace: `reads-commute` (the default: reads of a word by
        /// different threads are independent, as Nidhugg and GenMC count, and so are posts of a
        /// semaphore) or `mazurkiewicz` (every access to a word is dependent with every other,
        /// and every semaphore operation: more traces, for comparison).
        #[arg(long, value_name = "NAME", default_value = "reads-commute", value_parser = parse_equivalence)]
        equivalence: shared_proto::equivalence::Equivalence,
        /// Publish ever smaller admissible prefixes to the program's segment
        /// (/dev/shm/irs-<program id>) as verification proves them safe, for programs running
        /// under ENFORCE (`irs run --installed`).
        #[arg(long)]
        publish: bool,
        /// With --publish, which execution the prefixes are cut from: default (the default
        /// policy's: each thread as long as it can), natural (the order of events of one run
        /// with real threads, isolated like the explored executions, followed by a controlled
        /// execution: production runs then wait only where the program, left alone, tends to
        /// be ordered that way anyway) or auto (both, timed under their whole traces: the
        /// cheaper one)
        #[arg(long, default_value = "auto", value_parser = irs::service::anchor::Anchor::NAMES, requires = "publish")]
        anchor: String,
        /// Keep this file up to date with the verifier's state (JSON; what `irs status` reads).
        #[arg(long)]
        status_file: Option<PathBuf>,
        /// File every execution reads on stdin (default: nothing).
        #[arg(long, conflicts_with = "input")]
        stdin: Option<PathBuf>,
        /// Verify an input `irs run` captured (its key, as `irs status` lists it): its
        /// arguments, environment and standard input. With --publish, the prefixes go to that
        /// input's segment and the state, log and bugs to its directory, where `irs run` and
        /// `irs status` find them. Give the program alone after `--`.
        #[arg(long, value_name = "KEY")]
        input: Option<String>,
        /// Fork a process per execution instead of running executions in one persistent
        /// worker that restores its memory after each (slower; for comparison).
        #[arg(long)]
        fork_each: bool,
        /// The values every call of `__VERIFIER_nondet_*` explores, comma-separated (default
        /// 0,1; each held as the call's type holds it; a `bool`'s are always 0 and 1).
        #[arg(long, value_name = "LIST", value_parser = parse_nondet_values, allow_hyphen_values = true)]
        nondet_values: Option<ValueList>,
        /// The program (built by `irs cc`) and its arguments, after `--`.
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
    /// The background worker of a program: verifies the inputs `irs run` queued, one after
    /// another (started by `irs run`; not for people).
    #[command(hide = true)]
    Worker {
        /// Which execution the verifiers anchor the prefixes on (`irs verify --anchor`).
        #[arg(long, default_value = "auto", value_parser = irs::service::anchor::Anchor::NAMES)]
        anchor: String,
        /// The program, after `--`.
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
    /// Forget a program's verifications: stop its background verifier, remove every input's
    /// prefix, state, log and bug schedules, and the queue.
    Forget {
        /// The program (built by `irs cc`).
        program: String,
    },
    /// Build an admissible prefix from a trace of a complete run (`irs record` or
    /// `irs replay --trace-out`): the requirement table and a first cutoff vector.
    Constrain {
        /// The trace.
        #[arg(long)]
        trace: PathBuf,
        /// Where to write the prefix.
        #[arg(long, short)]
        out: PathBuf,
        /// Keep only the first N constraints in trace order (the shortest trace prefix holding them).
        #[arg(long, conflicts_with = "cut")]
        keep: Option<usize>,
        /// An explicit cutoff vector: events per thread, e.g. 3,5,0.
        #[arg(long)]
        cut: Option<String>,
    },
    /// Run an instrumented program under an admissible prefix (ENFORCE): every run contains
    /// the verified prefix before anything else happens. Exits with the program's code.
    Run(irs_service::run_cli::RunArgs),
    /// How the verification of a program stands (started by `irs run`): every input seen so
    /// far with its verdict and the constraints in force, the queue, and which input is this
    /// command's (its arguments, environment and standard input, taken as `irs run` takes them).
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Which environment variables are part of the input (as for `irs run`).
        #[arg(long, default_value = "read")]
        env: String,
        /// The program (built by `irs cc`) and its arguments.
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<String>,
    },
    /// Read admissible prefixes.
    Prefix {
        #[command(subcommand)]
        command: PrefixCommand,
    },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        command: BenchCommand,
    },
    /// Read traces.
    Trace {
        #[command(subcommand)]
        command: TraceCommand,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// ENFORCE overhead per constraint count, against the plain build (IRS paper, Fig. 3-4).
    Overhead {
        /// The plain build of the same program (`clang -O2`).
        #[arg(long)]
        plain: PathBuf,
        /// Runs of each configuration.
        #[arg(long, default_value_t = 200)]
        runs: usize,
        /// First trace: default (few preemptions), round-robin (many), natural (the order of
        /// events of a run with real threads, followed by a controlled execution, as `irs verify
        /// --publish --anchor natural` anchors it) or auto (the cheaper of natural and default,
        /// timed, as `--anchor auto` picks it).
        #[arg(long, default_value = "default", value_parser = ["default", "round-robin", "natural", "auto"])]
        policy: String,
        /// Measure at most this many constraint counts (evenly spread; all by default).
        #[arg(long)]
        points: Option<usize>,
        /// Name of the program in tables and plots (default: the binary's file name).
        #[arg(long)]
        name: Option<String>,
        /// Append the results to this CSV file (created with a header if missing).
        #[arg(long)]
        csv: Option<PathBuf>,
        /// Write an SVG plot of every series in the CSV file.
        #[arg(long, requires = "csv")]
        svg: Option<PathBuf>,
        /// The instrumented program and its arguments, after `--`.
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
}

#[derive(Subcommand)]
enum PrefixCommand {
    /// The constraints in force as edges with source locations, the cutoff vector and its log.
    Show { prefix: PathBuf },
    /// Install the prefix as the program's shared-memory segment /dev/shm/irs-<program-id>
    /// (mode 0600), where `irs run --installed` finds it.
    Install { prefix: PathBuf },
    /// Append a smaller cutoff vector (programs running under the prefix adopt it at once).
    Relax {
        prefix: PathBuf,
        /// Events per thread, e.g. 3,5,0; no entry larger than the cutoff in force.
        #[arg(long)]
        cut: String,
    },
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Print a trace: one line per event (thread, k, kind, object, function, file:line).
    Show {
        trace: PathBuf,
        /// Each thread's events in program order instead.
        #[arg(long)]
        by_thread: bool,
    },
}

const CC_HELP: &str = "\
Compile and link C like clang, instrumented and linked with irs-runtime.

Usage: irs cc [CLANG ARGS...] [--site-report FILE]

Takes the usual cc flags (-O0..3, -g, -I, -D, -std=, -c, -S, -o, -l, -L, several sources,
object files); anything else goes to clang unchanged. clang's diagnostics and exit code are
passed through.

  --site-report FILE   write every memory access and pthread call the pass saw:
                       instrumented or skipped, and why
";

fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("irs: {msg}");
    ExitCode::from(2)
}

fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(code.clamp(0, 255) as u8)
}

/// `--nondet-values`: comma-separated integers, at least one.
#[derive(Clone, Debug)]
struct ValueList(Vec<i64>);

fn parse_nondet_values(s: &str) -> Result<ValueList, String> {
    let v: Vec<i64> = s.split(',').map(|x| x.trim().parse::<i64>().map_err(|_| format!("`{}` is not an integer", x.trim()))).collect::<Result<_, _>>()?;
    if v.is_empty() {
        return Err("give at least one value".into());
    }
    Ok(ValueList(v))
}

fn parse_memory_limit(s: &str) -> Result<u64, String> {
    irs_verifier::memory_limit::parse_size(s).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    // SIGPIPE stays ignored (Rust's default): a program the executor talks to may die, and the
    // executor must then say so, not be killed by a write into the pipe it left. Output into a
    // closed pipe (`irs verify ... | head`) ends the process quietly, as it does other Unix
    // tools (the panic hook below turns the failed print into an exit with 128 + SIGPIPE).
    // A bug in irs (an internal invariant broken) is reported on one line and exits 101, not
    // with Rust's panic message and backtrace hint, or an abort; RUST_BACKTRACE set keeps the
    // full report.
    let default_hook = std::panic::take_hook();
    let full_report = std::env::var_os("RUST_BACKTRACE").is_some();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned());
        if msg.as_deref().is_some_and(|m| m.starts_with("failed printing to stdout") && m.contains("Broken pipe")) {
            std::process::exit(128 + libc::SIGPIPE);
        }
        if full_report {
            return default_hook(info);
        }
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        eprintln!("irs: internal error (a bug in irs): {}{at}", msg.as_deref().unwrap_or("a panic"));
        // Release builds abort on a panic (a signal, maybe a core file): exit instead.
        std::process::exit(101);
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) => e.exit(),
        Err(e) => {
            // A usage error: its first line (clap adds a tip and the usage below it), with the
            // indented lines that line announces (`... were not provided:` and the arguments).
            let text = e.render().to_string();
            let mut lines = text.lines();
            let mut line = lines.next().unwrap_or("error: bad arguments").to_string();
            if line.ends_with(':') {
                let listed: Vec<&str> = lines.take_while(|l| l.starts_with(' ')).map(str::trim).collect();
                line = format!("{line} {}", listed.join(", "));
            }
            eprintln!("{line} (see --help)");
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Command::Cc { args } => {
            if args.is_empty() || args.iter().any(|a| a == "--help" || a == "-h") && args.len() == 1 {
                print!("{CC_HELP}");
                return ExitCode::SUCCESS;
            }
            match irs_instrument::driver::run_cc(&args) {
                Ok(code) => exit_code(code),
                Err(e) => fail(format_args!("cc: {e}")),
            }
        }
        Command::Record { out, command } => {
            let (program, args) = command.split_first().expect("clap requires a program");
            match irs::record::record(&out, program, args) {
                Ok(r) => {
                    eprintln!(
                        "irs record: {} events, {} threads, outcome {} -> {}",
                        r.trace.events.len(),
                        r.trace.threads.len(),
                        r.trace.outcome,
                        out.display()
                    );
                    exit_code(r.exit_code)
                }
                Err(e) => fail(format_args!("record: {e}")),
            }
        }
        Command::Demo { dir } => match irs::demo::run(&dir) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(format_args!("demo: {e}")),
        },
        Command::Replay { schedule, schedule_default: _, policy, trace_out, timeout, stdin, input, nondet_values, svcomp, spin_bound, spurious_wake_ups, max_threads, command } => {
            let policy = if policy == "round-robin" { irs_verifier::executor::Policy::RoundRobin } else { irs_verifier::executor::Policy::Default };
            let (program, args) = command.split_first().expect("clap requires a program");
            let stored = match &input {
                Some(_) if !args.is_empty() => return fail("replay: --input replays the input's own arguments: give the program alone after --"),
                Some(key) => match irs::service::stored_input(program, key) {
                    Ok(s) => Some(s),
                    Err(e) => return fail(format_args!("replay: --input {key}: {e}")),
                },
                None => None,
            };
            let args: &[String] = stored.as_ref().map_or(args, |s| &s.input.args);
            let sched = match schedule.as_deref().map(irs::replay::read_schedule).transpose() {
                Ok(s) => s.unwrap_or_default(),
                Err(e) => return fail(format_args!("replay: {e}")),
            };
            let stdin = match stdin.as_deref().map(std::fs::read).transpose() {
                Ok(s) => s.unwrap_or_default(),
                Err(e) => return fail(format_args!("replay: cannot read stdin file: {e}")),
            };
            if !(timeout > 0.0 && timeout.is_finite()) {
                return fail("replay: --timeout must be a positive number of seconds");
            }
            let options = irs_verifier::executor::Options { timeout: std::time::Duration::from_secs_f64(timeout), stdin, nondet_values: nondet_values.map(|v| v.0), svcomp, spin_bound, spurious_wake_ups, max_threads, ..Default::default() };
            let options = match &stored {
                Some(s) => s.exec_options(options),
                None => options,
            };
            match irs::replay::replay(program, args, &sched, policy, options, trace_out.as_deref()) {
                Ok(run) => {
                    print!("{}", irs::trace_view::table(&run.trace));
                    if !run.output.is_empty() {
                        println!("# program output:");
                        print!("{}", String::from_utf8_lossy(&run.output));
                    }
                    println!("outcome: {}", run.trace.outcome);
                    ExitCode::from(irs::replay::exit_code(&run.trace.outcome))
                }
                Err(e) => fail(format_args!("replay: {e}")),
            }
        }
        Command::Explore { random, seed, timeout, out_dir, snapshot_at, fork_each, nondet_values, command } => {
            let (program, args) = command.split_first().expect("clap requires a program");
            if !(timeout > 0.0 && timeout.is_finite()) {
                return fail("explore: --timeout must be a positive number of seconds");
            }
            let options = irs_verifier::executor::Options { timeout: std::time::Duration::from_secs_f64(timeout), fork_each, nondet_values: nondet_values.map(|v| v.0), ..Default::default() };
            let started = std::time::Instant::now();
            let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
            let report = irs::explore::explore_random(program, args, random, seed, snapshot_at, options, &out_dir, |n| {
                if tty && (n % 100 == 0 || n == random) {
                    eprint!("\rirs explore: {n}/{random} executions, {:.0}/s", n as f64 / started.elapsed().as_secs_f64());
                }
            });
            if tty {
                eprintln!();
            }
            match report {
                Ok(r) => {
                    let secs = started.elapsed().as_secs_f64();
                    let (setup, run, transfer) = r.split();
                    println!(
                        "{} executions in {secs:.2} s ({:.0}/s; per execution: set-up (fork or restore) {setup:.1} µs, run {run:.1} µs, transfer {transfer:.1} µs); {} distinct outcomes:",
                        r.executions,
                        r.executions as f64 / secs,
                        r.classes.len()
                    );
                    for c in &r.classes {
                        println!("  {:>8}  {}", c.count, c.outcome);
                        if let Some(f) = &c.schedule_file {
                            println!("            reproduce: irs replay --schedule {} -- {}", f.display(), command.join(" "));
                        }
                    }
                    ExitCode::from(if r.found_bug() { 1 } else { 0 })
                }
                Err(e) => fail(format_args!("explore: {e}")),
            }
        }
        Command::Verify { k, optimal: _, max_executions, time_limit, memory_limit, first_bug, svcomp, spin_bound, spurious_wake_ups, max_threads, timeout, json, out_dir, schedules_out, skip_step, snapshot_gap, no_snapshots, prune_at, no_race_free_words, equivalence, publish, anchor, status_file, stdin, input, fork_each, nondet_values, command } => {
            let (program, args) = command.split_first().expect("clap requires a program");
            let stored = match &input {
                Some(_) if !args.is_empty() => return fail("verify: --input replays the input's own arguments: give the program alone after --"),
                Some(key) => match irs::service::stored_input(program, key) {
                    Ok(s) => Some(s),
                    Err(e) => return fail(format_args!("verify: --input {key}: {e}")),
                },
                None => None,
            };
            let args: &[String] = stored.as_ref().map_or(args, |s| &s.input.args);
            if !(timeout > 0.0 && timeout.is_finite()) {
                return fail("verify: --timeout must be a positive number of seconds");
            }
            if time_limit.is_some_and(|t| !(t > 0.0 && t.is_finite())) {
                return fail("verify: --time-limit must be a positive number of seconds");
            }
            if max_executions == Some(0) {
                return fail("verify: --max-executions 0 would verify nothing: give 1 or more (every exploration runs at least its first execution)");
            }
            let stdin = match stdin {
                Some(p) => match std::fs::read(&p) {
                    Ok(b) => b,
                    Err(e) => return fail(format_args!("verify: cannot read {}: {e}", p.display())),
                },
                None => Vec::new(),
            };
            let k = k.map(|k| k as usize);
            let opts = irs_verifier::qpor::Options {
                k,
                max_executions,
                time_limit: time_limit.map(std::time::Duration::from_secs_f64),
                skip_step,
                snapshots: match (no_snapshots, snapshot_gap) {
                    (true, _) => irs_verifier::qpor::SnapshotPolicy::Off,
                    (false, Some(g)) => irs_verifier::qpor::SnapshotPolicy::Gap(g as usize),
                    (false, None) => irs_verifier::qpor::SnapshotPolicy::Auto,
                },
                first_schedule: None,
                prune_at,
                race_free_words: !no_race_free_words,
                first_bug,
                memory_limit: Some(memory_limit.unwrap_or_else(irs_verifier::memory_limit::default_limit)),
                equivalence,
            };
            let mut publisher = match &stored {
                Some(s) if publish => Some(irs::service::publish::Publisher::to(s.store.segment())),
                _ => publish.then(irs::service::publish::Publisher::new),
            };
            if let Some(p) = publisher.as_mut() {
                p.anchor = irs::service::anchor::Anchor::parse(&anchor).unwrap_or_default();
            }
            if let Some(p) = publisher.as_mut() {
                p.equivalence = equivalence;
            }
            // A stored input's verification keeps its state and bugs in the input's directory.
            let status_file = status_file.or_else(|| stored.as_ref().filter(|_| publish).map(|s| s.store.state_file()));
            let out_dir = match (&stored, out_dir) {
                (Some(s), None) => s.store.bugs_dir(),
                (_, d) => d.unwrap_or_else(|| PathBuf::from(".")),
            };
            if let Err(e) = std::fs::create_dir_all(&out_dir) {
                return fail(format_args!("verify: cannot create {}: {e}", out_dir.display()));
            }
            // The bugs' `irs replay` commands must explore the same values, with the same conventions.
            let nondet_values = nondet_values.map(|v| v.0);
            let mut replay_args = nondet_values.as_ref().map(|v| format!("--nondet-values {} ", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","))).unwrap_or_default();
            if svcomp {
                replay_args.push_str("--svcomp ");
            }
            if let Some(k) = spin_bound {
                replay_args.push_str(&format!("--spin-bound {k} "));
            }
            if spurious_wake_ups {
                replay_args.push_str("--spurious-wake-ups ");
            }
            if let Some(n) = max_threads {
                replay_args.push_str(&format!("--max-threads {n} "));
            }
            if let Some(s) = &stored {
                replay_args.push_str(&format!("--input {} ", s.store.key));
            }
            let shown: Vec<String> = std::iter::once(program.clone()).chain(args.iter().cloned()).collect();
            let exec = irs_verifier::executor::Options { timeout: std::time::Duration::from_secs_f64(timeout), stdin, fork_each, nondet_values, svcomp, spin_bound, spurious_wake_ups, max_threads, ..Default::default() };
            let exec = match &stored {
                Some(s) => s.exec_options(exec),
                None => exec,
            };
            let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
            let result = irs::verify::verify(program, args, opts, exec, &out_dir, schedules_out.as_deref(), publisher.as_mut(), status_file.as_deref(), |s| {
                if tty {
                    let secs = s.elapsed.as_secs_f64().max(1e-9);
                    eprint!(
                        "\rirs verify: {} executions ({} SSB), {} events, {:.0} runs/s, {:.1} s   ",
                        s.executions, s.ssb, s.events_created, s.runs as f64 / secs, secs
                    );
                }
            });
            if tty {
                eprintln!();
            }
            match result {
                Ok(o) => {
                    let s = &o.report.stats;
                    let secs = s.elapsed.as_secs_f64();
                    println!("mode: {}; traces counted {}", match k { Some(k) => format!("{k}-partial alternatives"), None => "optimal".into() }, irs::verify::equivalence_text(s, equivalence));
                    println!(
                        "executions: {}  SSB: {}  traces: {}  events: {} (peak in memory {})",
                        s.executions, s.ssb, s.traces, s.events_created, s.events_peak
                    );
                    println!(
                        "time: {secs:.2} s ({:.0}% running the program ({:.0}% setting its runs up), {:.0}% from requests to answers; {} runs, {:.0} runs/s, {} from snapshots made); peak memory {} MB",
                        100.0 * s.program_micros as f64 / 1e6 / secs.max(1e-9),
                        100.0 * s.setup_micros as f64 / 1e6 / secs.max(1e-9),
                        100.0 * s.executor_micros as f64 / 1e6 / secs.max(1e-9),
                        s.runs,
                        s.runs as f64 / secs.max(1e-9),
                        s.snapshots,
                        o.peak_rss_kb / 1024
                    );
                    let share = |micros: u64| 100.0 * micros as f64 / 1e6 / secs.max(1e-9);
                    println!(
                        "the program waiting for the verifier: {:.0}% while it walks a run the program has ended, {:.0}% while it backtracks; pruning {:.0}% (begins as a run starts)",
                        share(s.walk_behind_micros),
                        share(s.backtrack_micros),
                        share(s.prune_micros)
                    );
                    println!(
                        "memory words: {} race-free (ordered by synchronisation in every execution explored), {} racy{}; {} restarts",
                        s.race_free_words,
                        s.racy_words,
                        if s.guarded_words > 0 { format!(" ({} of them accessed by atomic blocks, ordered with the blocks)", s.guarded_words) } else { String::new() },
                        s.restarts
                    );
                    if s.discarded > 0 {
                        println!("discarded: {} of the traces end in a failed __VERIFIER_assume or with a thread halted in a spin-wait whose reads were written since (neither bugs nor evidence of safety; what follows is explored where the write comes first)", s.discarded);
                    }
                    for r in &o.report.races {
                        println!("race: {r}");
                    }
                    if let Some(why) = &o.report.stopped {
                        println!("incomplete: {why}");
                    }
                    for (b, f) in o.report.bugs.iter().chain(&o.report.nonterminating).zip(&o.schedule_files) {
                        println!("found: {} ({} executions)", b.outcome, b.count);
                        println!("  reproduce: irs replay {replay_args}--schedule {} -- {}", f.display(), shown.join(" "));
                    }
                    if let Some(p) = &publisher {
                        if let Some(note) = &o.anchor_note {
                            println!("publish: {note}");
                        }
                        if let Some(seg) = &p.segment {
                            println!("published to {}: {} prefixes", seg.display(), p.log.len());
                            for step in &p.log {
                                println!(
                                    "  at {:>7.2} s, {:>6} traces verified: {} steps of the first execution, {} constraints",
                                    step.seconds, step.traces, step.steps, step.constraints
                                );
                            }
                        }
                        if let Some(e) = &p.error {
                            println!("publish: {e}");
                        }
                    }
                    println!("covers: {}", o.covers());
                    println!("{}", o.verdict_line());
                    if json {
                        let mut j = irs::verify::to_json(&o, k);
                        if let Some(p) = &publisher {
                            j["published"] = irs::verify::published_json(p);
                            j["published"]["anchor"] = serde_json::json!(o.anchor_note);
                        }
                        println!("{j}");
                    }
                    ExitCode::from(o.exit_code())
                }
                Err(e) => fail(format_args!("verify: {e}")),
            }
        }
        Command::Constrain { trace, out, keep, cut } => {
            let keep = match (keep, cut) {
                (Some(n), _) => irs::constrain::Keep::Constraints(n),
                (None, Some(c)) => match irs::constrain::parse_cut(&c) {
                    Ok(v) => irs::constrain::Keep::Cut(v),
                    Err(e) => return fail(format_args!("constrain: {e}")),
                },
                (None, None) => irs::constrain::Keep::All,
            };
            match irs::constrain::constrain(&trace, &out, keep) {
                Ok(s) => {
                    println!(
                        "{}: cutoff {} over {} threads, {} of {} constraints",
                        out.display(),
                        s.cut.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","),
                        s.threads,
                        s.constraints,
                        s.total_constraints
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => fail(format_args!("constrain: {e}")),
            }
        }
        Command::Run(args) if args.under_irs() => ExitCode::from(irs_service::run_cli::run_under_irs(args)),
        Command::Worker { anchor, command } => {
            let exe = PathBuf::from(&command[0]);
            let id = match irs::service::program_id(&command[0], &[]) {
                Ok(id) => id,
                Err(e) => return fail(format_args!("worker: {e}")),
            };
            let program = irs::service::store::ProgramStore::of(id);
            match irs::service::worker::work(&exe, &program, irs::service::anchor::Anchor::parse(&anchor).unwrap_or_default(), |m| eprintln!("irs worker: {m}")) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(format_args!("worker: {e}")),
            }
        }
        Command::Forget { program } => match irs::service::program_id(&program, &[]) {
            Ok(id) => {
                let n = irs::service::forget(id);
                println!("forgot {n} input(s) of {program} (program {id})");
                ExitCode::SUCCESS
            }
            Err(e) => fail(format_args!("forget: {e}")),
        },
        Command::Status { json, env, command } => {
            let (program, args) = command.split_first().expect("clap requires a program");
            let env = match irs::service::input::EnvSelection::parse(&env) {
                Ok(e) => e,
                Err(e) => return fail(format_args!("status: {e}")),
            };
            match irs::service::status_report(program, args, env) {
                Ok(r) if json => {
                    println!("{}", r.json());
                    ExitCode::SUCCESS
                }
                Ok(r) if r.inputs.is_empty() => fail(format_args!("status: no verifier has run for {program} (program {})", r.id)),
                Ok(r) => {
                    print!("{}", r.text(program));
                    ExitCode::SUCCESS
                }
                Err(e) => fail(format_args!("status: {e}")),
            }
        }
        Command::Run(irs_service::run_cli::RunArgs { prefix, chaos, divergence, command, .. }) => {
            let (program, args) = command.split_first().expect("clap requires a program");
            let prefix_abs = match prefix {
                Some(p) => {
                    if let Err(e) = std::fs::File::open(&p) {
                        return fail(format_args!("run: cannot open the prefix {}: {e}", p.display()));
                    }
                    std::path::absolute(&p).unwrap_or(p).into_os_string()
                }
                // The runtime finds /dev/shm/irs-<its program id>.
                None => std::ffi::OsString::from("installed"),
            };
            let mut env: Vec<(&str, &std::ffi::OsStr)> =
                vec![("IRS_MODE", "enforce".as_ref()), ("IRS_PREFIX", prefix_abs.as_os_str()), ("IRS_DIVERGENCE", divergence.as_ref())];
            if chaos {
                env.push(("IRS_CHAOS", "1".as_ref()));
            }
            match irs::launch::run(program, args, &env) {
                Ok(status) => exit_code(irs::launch::exit_code(status)),
                Err(e) => fail(format_args!("run: {e}")),
            }
        }
        Command::Prefix { command: PrefixCommand::Install { prefix } } => match irs::constrain::install(&prefix) {
            Ok(target) => {
                println!("{} installed as {}", prefix.display(), target.display());
                ExitCode::SUCCESS
            }
            Err(e) => fail(format_args!("prefix install: {}: {e}", prefix.display())),
        },
        Command::Prefix { command: PrefixCommand::Relax { prefix, cut } } => {
            match irs::constrain::parse_cut(&cut).and_then(|c| irs::constrain::relax(&prefix, &c)) {
                Ok(i) => {
                    println!("{}: cutoff {cut} published (log entry {i})", prefix.display());
                    ExitCode::SUCCESS
                }
                Err(e) => fail(format_args!("prefix relax: {}: {e}", prefix.display())),
            }
        }
        Command::Prefix { command: PrefixCommand::Show { prefix } } => match irs::constrain::show(&prefix) {
            Ok(text) => {
                print!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => fail(format_args!("prefix show: {prefix}: {e}", prefix = prefix.display())),
        },
        Command::Bench { command: BenchCommand::Overhead { plain, runs, policy, points, name, csv, svg, command } } => {
            let (program, args) = command.split_first().expect("clap requires a program");
            let pol = match policy.as_str() {
                "round-robin" => irs::bench_overhead::FirstTrace::Policy(irs_verifier::executor::Policy::RoundRobin),
                "natural" => irs::bench_overhead::FirstTrace::Natural,
                "auto" => irs::bench_overhead::FirstTrace::Auto,
                _ => irs::bench_overhead::FirstTrace::Policy(irs_verifier::executor::Policy::Default),
            };
            let name = name.unwrap_or_else(|| std::path::Path::new(program).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
            let work = std::env::temp_dir().join(format!("irs-bench-{}", std::process::id()));
            let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
            let result = irs::bench_overhead::overhead(&plain, program, args, pol, runs.max(1), points, &work, |done, total| {
                if tty && (done % 50 == 0 || done == total) {
                    eprint!("\rirs bench: {done}/{total} runs");
                }
            });
            let _ = std::fs::remove_dir_all(&work);
            if tty {
                eprintln!();
            }
            match result {
                Ok(r) => {
                    print!("{}", r.markdown(&name, &policy));
                    if let Some(csv) = &csv {
                        let mut text = std::fs::read_to_string(csv).unwrap_or_default();
                        if text.is_empty() {
                            text.push_str(irs::bench_overhead::CSV_HEADER);
                        }
                        text.push_str(&r.csv_rows(&name, &policy));
                        if let Err(e) = std::fs::write(csv, &text) {
                            return fail(format_args!("bench: cannot write {}: {e}", csv.display()));
                        }
                        if let Some(svg) = &svg {
                            let plot = irs::bench_overhead::plot_csv(&text, "ENFORCE overhead per constraint count");
                            if let Err(e) = std::fs::write(svg, plot) {
                                return fail(format_args!("bench: cannot write {}: {e}", svg.display()));
                            }
                        }
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => fail(format_args!("bench overhead: {e}")),
            }
        }
        Command::Trace { command: TraceCommand::Show { trace, by_thread } } => match shared_proto::Trace::read(&trace) {
            Ok(t) => {
                let text = if by_thread { irs::trace_view::by_thread(&t) } else { irs::trace_view::table(&t) };
                use std::io::Write;
                let _ = std::io::stdout().write_all(text.as_bytes());
                ExitCode::SUCCESS
            }
            Err(e) => fail(format_args!("trace show: {e}")),
        },
    }
}

/// `--equivalence NAME`.
fn parse_equivalence(s: &str) -> Result<shared_proto::equivalence::Equivalence, String> {
    shared_proto::equivalence::Equivalence::from_name(s).ok_or_else(|| format!("`{s}` is not an equivalence: give reads-commute or mazurkiewicz"))
}
