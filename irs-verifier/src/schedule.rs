//! Schedules as people and files write them (DESIGN §7: an execution is a function of its
//! schedule): logical thread ids separated by commas, spaces or newlines; `T3` and `3` mean the
//! same; `#` starts a comment. A step at which the thread calls `__VERIFIER_nondet_*` may say which
//! value it takes: `T3:1` (an index into the explored values; `T3` is `T3:0`). Parsing and
//! formatting only: `format` then `parse` gives the schedule back, and a schedule is never checked
//! against a program here.

use shared_proto::ThreadId;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("schedule: {0}")]
pub struct ScheduleError(String);

pub fn parse(text: &str) -> Result<Vec<ThreadId>, ScheduleError> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        for tok in line.split(|c: char| c == ',' || c.is_whitespace()).filter(|t| !t.is_empty()) {
            let bad = || ScheduleError(format!("line {}: `{tok}` is not a thread id", n + 1));
            let digits = tok.strip_prefix('T').or_else(|| tok.strip_prefix('t')).unwrap_or(tok);
            let (id, choice) = digits.split_once(':').unwrap_or((digits, "0"));
            let id: u32 = id.parse().map_err(|_| bad())?;
            let choice: u32 = choice.parse().map_err(|_| bad())?;
            if id >= 1 << ThreadId::CHOICE_SHIFT || choice >= 1 << (32 - ThreadId::CHOICE_SHIFT) {
                return Err(bad());
            }
            out.push(ThreadId(id).with_choice(choice));
        }
    }
    Ok(out)
}

/// One id per line would be long; one line, comma-separated, is what `parse` reads back.
pub fn format(schedule: &[ThreadId]) -> String {
    let ids: Vec<String> = schedule
        .iter()
        .map(|t| match t.choice() {
            0 => t.0.to_string(),
            c => format!("{}:{c}", t.thread().0),
        })
        .collect();
    format!("{}\n", ids.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_it_formats_and_common_spellings() {
        let s = vec![ThreadId(0), ThreadId(1), ThreadId(1), ThreadId(2)];
        assert_eq!(parse(&format(&s)).unwrap(), s);
        assert_eq!(parse("T0, T1\n1 # comment\n\n2\n").unwrap(), s);
        assert_eq!(parse("").unwrap(), vec![]);
        assert!(parse("0,x").unwrap_err().0.contains("`x` is not a thread id"));
        let with_values = vec![ThreadId(0), ThreadId(1).with_choice(2), ThreadId(1)];
        assert_eq!(format(&with_values), "0,1:2,1\n");
        assert_eq!(parse("T0 T1:2 1:0").unwrap(), with_values);
        assert!(parse("1:x").is_err() && parse("70000").is_err());
    }
}
