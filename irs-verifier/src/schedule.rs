//! Schedules as people and files write them (issue 3): logical thread ids separated by commas,
//! spaces or newlines; `T3` and `3` mean the same; `#` starts a comment.

use shared_proto::ThreadId;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("schedule: {0}")]
pub struct ScheduleError(String);

pub fn parse(text: &str) -> Result<Vec<ThreadId>, ScheduleError> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        for tok in line.split(|c: char| c == ',' || c.is_whitespace()).filter(|t| !t.is_empty()) {
            let digits = tok.strip_prefix('T').or_else(|| tok.strip_prefix('t')).unwrap_or(tok);
            let id: u32 = digits
                .parse()
                .map_err(|_| ScheduleError(format!("line {}: `{tok}` is not a thread id", n + 1)))?;
            out.push(ThreadId(id));
        }
    }
    Ok(out)
}

/// One id per line would be long; one line, comma-separated, is what `parse` reads back.
pub fn format(schedule: &[ThreadId]) -> String {
    let ids: Vec<String> = schedule.iter().map(|t| t.0.to_string()).collect();
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
    }
}
