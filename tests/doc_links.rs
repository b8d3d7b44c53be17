//! The documentation's links hold: every relative Markdown link in `README.md` and in `docs/`
//! (`[text](path)`, `[text](path#anchor)`, `[text](#anchor)`) names a file that exists and,
//! with an anchor, a heading of that file (GitHub's and mdBook's slugs: lowercase, spaces to
//! `-`, other punctuation dropped, `-N` for the N-th repeat). Every page of the book
//! (`docs/src/*.md`) is listed in `docs/src/SUMMARY.md`, and every page SUMMARY lists exists.
//! No build, no network: it reads files only.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown files to check: README.md and every `.md` under docs/.
fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The text outside code: fenced blocks become empty lines (line numbers stay), inline code
/// spans become spaces.
fn prose_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(f) = &fence {
            if trimmed.starts_with(f.as_str()) {
                fence = None;
            }
            out.push(String::new());
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            let ch = trimmed.chars().next().unwrap();
            let n = trimmed.chars().take_while(|&c| c == ch).count();
            fence = Some(std::iter::repeat(ch).take(n).collect());
            out.push(String::new());
            continue;
        }
        out.push(blank_code_spans(line));
    }
    out
}

/// The line with its inline code spans (`` `x` ``, ``` ``x`` ```) replaced by a space.
fn blank_code_spans(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::new();
    let (mut i, mut last) = (0, 0);
    while i < b.len() {
        if b[i] != b'`' {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len() && b[j] == b'`' {
            j += 1;
        }
        match find_closing(&line[j..], j - i) {
            Some(k) => {
                out.push_str(&line[last..i]);
                out.push(' ');
                i = j + k + (j - i);
                last = i;
            }
            None => i = j,
        }
    }
    out.push_str(&line[last..]);
    out
}

/// The byte offset of a run of exactly `n` backticks in `rest`.
fn find_closing(rest: &str, n: usize) -> Option<usize> {
    let bytes = rest.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let mut j = i;
            while j < bytes.len() && bytes[j] == b'`' {
                j += 1;
            }
            if j - i == n {
                return Some(i);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    None
}

/// Every inline link target `(target)` after `]` in a line of prose.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b']' && bytes[i + 1] == b'(' {
            let start = i + 2;
            let mut depth = 1;
            let mut j = start;
            while j < bytes.len() {
                match bytes[j] {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            if j < bytes.len() {
                // `<path with spaces>`; a title after the target (`(path "title")`) is not
                // part of it.
                let inner = line[start..j].trim();
                let target = match inner.strip_prefix('<') {
                    Some(r) => r.split('>').next().unwrap_or(""),
                    None => inner.split_whitespace().next().unwrap_or(""),
                };
                targets.push(target.to_string());
                i = j;
            }
        }
        i += 1;
    }
    targets
}

/// GitHub's slug of a heading's text: inline code marks and links dropped to their text,
/// lowercase, spaces to '-', every character but letters, digits, '-' and '_' dropped.
fn slug(heading: &str) -> String {
    // [text](url) -> text
    let mut text = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        match rest[open..].find("](") {
            Some(mid) => match rest[open + mid..].find(')') {
                Some(close) => {
                    text.push_str(&rest[..open]);
                    text.push_str(&rest[open + 1..open + mid]);
                    rest = &rest[open + mid + close + 1..];
                }
                None => break,
            },
            None => break,
        }
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| {
            if c == ' ' {
                Some('-')
            } else if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c)
            } else {
                None
            }
        })
        .collect()
}

/// The anchors of a file's headings (ATX headings outside code), repeats numbered `-1`, `-2`.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = BTreeSet::new();
    let mut in_fence = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || !t.starts_with('#') {
            continue;
        }
        let level = t.chars().take_while(|&c| c == '#').count();
        if level > 6 || !(t[level..].is_empty() || t[level..].starts_with(' ')) {
            continue;
        }
        let heading = t[level..].trim().trim_end_matches('#').trim();
        let base = slug(heading);
        let n = seen.entry(base.clone()).or_insert(0);
        let anchor = if *n == 0 { base.clone() } else { format!("{base}-{n}") };
        *n += 1;
        out.insert(anchor);
    }
    out
}

fn is_external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:") || target.starts_with("//")
}

fn rel(path: &Path) -> String {
    path.strip_prefix(root()).unwrap_or(path).display().to_string()
}

/// Every broken relative link of the checked files, as `file:line: [..](target): why`.
fn broken_links() -> Vec<String> {
    let mut broken = Vec::new();
    let mut anchor_cache: HashMap<PathBuf, BTreeSet<String>> = HashMap::new();
    for file in markdown_files() {
        let text = fs::read_to_string(&file).unwrap();
        for (n, line) in prose_lines(&text).iter().enumerate() {
            for target in link_targets(line) {
                if target.is_empty() || is_external(&target) {
                    continue;
                }
                let (path_part, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target.as_str(), None),
                };
                let dest = if path_part.is_empty() {
                    file.clone()
                } else {
                    file.parent().unwrap().join(path_part)
                };
                let at = format!("{}:{}: ({target})", rel(&file), n + 1);
                if !dest.exists() {
                    broken.push(format!("{at}: no file {}", rel(&dest)));
                    continue;
                }
                let Some(anchor) = anchor else { continue };
                if dest.is_dir() || dest.extension().map_or(true, |e| e != "md") {
                    broken.push(format!("{at}: an anchor into something that is not a Markdown file"));
                    continue;
                }
                let dest = dest.canonicalize().unwrap();
                let known = anchor_cache
                    .entry(dest.clone())
                    .or_insert_with(|| anchors(&fs::read_to_string(&dest).unwrap()));
                if !known.contains(anchor) {
                    broken.push(format!("{at}: no heading #{anchor} in {}", rel(&dest)));
                }
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_resolves() {
    let broken = broken_links();
    assert!(broken.is_empty(), "{} broken link(s):\n{}", broken.len(), broken.join("\n"));
}

#[test]
fn every_book_page_is_in_the_summary() {
    let src = root().join("docs/src");
    let summary = fs::read_to_string(src.join("SUMMARY.md")).expect("docs/src/SUMMARY.md");
    let listed: BTreeSet<PathBuf> = prose_lines(&summary)
        .iter()
        .flat_map(|l| link_targets(l))
        .filter(|t| !t.is_empty() && !is_external(t))
        .map(|t| src.join(t.split('#').next().unwrap()))
        .collect();
    let mut problems = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md")
                && path.file_name().unwrap() != "SUMMARY.md"
                && !listed.contains(&path)
            {
                problems.push(format!("{} is not listed in docs/src/SUMMARY.md", rel(&path)));
            }
        }
    }
    for page in &listed {
        if !page.exists() {
            problems.push(format!("docs/src/SUMMARY.md lists {}, which does not exist", rel(page)));
        }
    }
    problems.sort();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(root().join("docs/book.toml").exists(), "docs/book.toml is missing");
}

#[test]
fn slugs_follow_github() {
    assert_eq!(slug("The process's end"), "the-processs-end");
    assert_eq!(slug("`irs run --wait-limit`"), "irs-run---wait-limit");
    assert_eq!(slug("Leaving the verified trace, or the verified input"), "leaving-the-verified-trace-or-the-verified-input");
    assert_eq!(slug("`benchmarks/irs_overhead/` with `benchmarks/irs_paper/`"), "benchmarksirs_overhead-with-benchmarksirs_paper");
    assert_eq!(slug("A [link](x.md) here"), "a-link-here");
    assert_eq!(slug("Synchronisation: what irs models"), "synchronisation-what-irs-models");
    let a = anchors("# A\n## A\n```\n# B\n```\n## Tests\n");
    assert!(a.contains("a") && a.contains("a-1") && a.contains("tests") && !a.contains("b"));
    assert_eq!(link_targets("see [x](a.md#b) and [y](<c d.md>) and [z](e.md \"t\")"), ["a.md#b", "c d.md", "e.md"]);
    assert!(prose_lines("`[x](nowhere.md)` and [y](here.md)")[0].find("nowhere").is_none());
}
