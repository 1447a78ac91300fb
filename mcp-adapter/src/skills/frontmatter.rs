//! A small, tolerant reader for the YAML frontmatter of a `SKILL.md` (MCP-60).
//!
//! Only what Skills need: top-level `key: value` lines, where the values of `name` and
//! `description` may be plain (also continued on indented lines), single-quoted,
//! double-quoted (with the common escapes, possibly over several lines) or block scalars
//! (`|`, `>`, with `-`/`+` chomping). Other keys are skipped together with their indented
//! lines (nested maps, lists). Comments and blank lines are allowed. Anything else is an
//! error that disables only this Skill.

use std::collections::BTreeMap;

/// Longest frontmatter accepted, in bytes (local choice).
pub const FRONTMATTER_MAX_BYTES: usize = 16 * 1024;

/// Why a frontmatter could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrontmatterError {
    /// The file does not start with a `---` line.
    #[error("no YAML frontmatter (the file must start with a --- line)")]
    Missing,
    /// No closing `---` line.
    #[error("the frontmatter has no closing --- line")]
    Unterminated,
    /// Longer than [`FRONTMATTER_MAX_BYTES`].
    #[error("the frontmatter is longer than {FRONTMATTER_MAX_BYTES} bytes")]
    TooLong,
    /// A line that is not `key: value` (1-based line number within the file).
    #[error("frontmatter line {0} is not a `key: value` line")]
    BadLine(usize),
    /// A quoted value is not closed or has a bad escape.
    #[error("frontmatter line {0} has an unterminated or malformed quoted value")]
    BadQuote(usize),
    /// The same key twice.
    #[error("frontmatter line {0} repeats a key")]
    DuplicateKey(usize),
}

/// The parsed frontmatter: the scalar values of the keys we read, and the body's byte
/// offset in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frontmatter {
    /// `name`, `description` (other keys are not kept).
    pub values: BTreeMap<String, String>,
    /// Where the body starts in the input text.
    pub body_start: usize,
}

const KEPT: [&str; 2] = ["name", "description"];

/// Splits `text` into its frontmatter values and body offset.
pub fn parse(text: &str) -> Result<Frontmatter, FrontmatterError> {
    let text_no_bom = text.strip_prefix('\u{feff}').unwrap_or(text);
    let bom = text.len() - text_no_bom.len();
    // Lines with their byte offsets.
    let mut lines: Vec<(usize, &str)> = Vec::new();
    let mut offset = bom;
    for raw in text_no_bom.split_inclusive('\n') {
        lines.push((offset, raw));
        offset += raw.len();
    }
    let first = lines.first().map(|(_, l)| trim_eol(l));
    if first.map(str::trim_end) != Some("---") {
        return Err(FrontmatterError::Missing);
    }
    let mut end = None;
    for (i, (off, raw)) in lines.iter().enumerate().skip(1) {
        if off - bom > FRONTMATTER_MAX_BYTES {
            return Err(FrontmatterError::TooLong);
        }
        let l = trim_eol(raw).trim_end();
        if l == "---" || l == "..." {
            end = Some(i);
            break;
        }
    }
    let Some(end) = end else {
        return Err(if offset - bom > FRONTMATTER_MAX_BYTES {
            FrontmatterError::TooLong
        } else {
            FrontmatterError::Unterminated
        });
    };
    let body_start = lines.get(end + 1).map_or(text.len(), |(o, _)| *o);
    let inner: Vec<&str> = lines[1..end].iter().map(|(_, l)| trim_eol(l)).collect();
    let values = parse_mapping(&inner)?;
    Ok(Frontmatter { values, body_start })
}

fn trim_eol(l: &str) -> &str {
    l.trim_end_matches('\n').trim_end_matches('\r')
}

fn indent(l: &str) -> usize {
    l.len() - l.trim_start_matches(' ').len()
}

fn is_blank_or_comment(l: &str) -> bool {
    let t = l.trim();
    t.is_empty() || t.starts_with('#')
}

/// `lines` are the frontmatter lines; line numbers in errors are 1-based in the file
/// (the opening `---` is line 1).
fn parse_mapping(lines: &[&str]) -> Result<BTreeMap<String, String>, FrontmatterError> {
    let mut values = BTreeMap::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let lineno = i + 2;
        if is_blank_or_comment(line) {
            i += 1;
            continue;
        }
        if indent(line) > 0 || line.starts_with('\t') {
            return Err(FrontmatterError::BadLine(lineno));
        }
        let Some((key, rest)) = split_key(line) else {
            return Err(FrontmatterError::BadLine(lineno));
        };
        if !seen.insert(key.to_owned()) {
            return Err(FrontmatterError::DuplicateKey(lineno));
        }
        // The value's continuation lines: indented, or blank.
        let mut j = i + 1;
        while j < lines.len() && (lines[j].trim().is_empty() || indent(lines[j]) > 0) {
            j += 1;
        }
        let continuation = &lines[i + 1..j];
        if KEPT.contains(&key) {
            let value = scalar(rest.trim(), continuation, lineno)?;
            values.insert(key.to_owned(), value);
        }
        i = j;
    }
    Ok(values)
}

/// `key: rest` with a plain key (no quotes, no spaces).
fn split_key(line: &str) -> Option<(&str, &str)> {
    let (key, rest) = line.split_once(':')?;
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return None;
    }
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    Some((key, rest))
}

fn scalar(first: &str, more: &[&str], lineno: usize) -> Result<String, FrontmatterError> {
    if let Some(header) = first.strip_prefix(['|', '>']) {
        let folded = first.starts_with('>');
        let header = strip_comment(header).trim();
        if !header.chars().all(|c| matches!(c, '-' | '+' | '1'..='9')) {
            return Err(FrontmatterError::BadLine(lineno));
        }
        return Ok(block(
            folded,
            header.contains('-'),
            header.contains('+'),
            more,
        ));
    }
    if first.starts_with('"') || first.starts_with('\'') {
        let mut joined = first.to_owned();
        for l in more {
            joined.push('\n');
            joined.push_str(l.trim());
        }
        return quoted(&joined).ok_or(FrontmatterError::BadQuote(lineno));
    }
    // Plain scalar, possibly continued on indented lines (folded with spaces).
    let mut parts = vec![strip_comment(first).trim().to_owned()];
    for l in more {
        let t = l.trim();
        if t.is_empty() {
            parts.push("\n".to_owned());
        } else if !t.starts_with('#') {
            parts.push(strip_comment(t).trim().to_owned());
        }
    }
    Ok(fold(&parts))
}

/// Removes a ` #comment` from a plain scalar.
fn strip_comment(s: &str) -> &str {
    match s.find(" #") {
        Some(i) => &s[..i],
        None if s.starts_with('#') => "",
        None => s,
    }
}

/// Joins lines the YAML way: a single line break becomes a space, an empty line a newline.
fn fold(parts: &[String]) -> String {
    let mut out = String::new();
    let mut pending_space = false;
    for p in parts {
        if p == "\n" {
            out.push('\n');
            pending_space = false;
        } else if !p.is_empty() {
            if pending_space {
                out.push(' ');
            }
            out.push_str(p);
            pending_space = true;
        }
    }
    out.trim().to_owned()
}

fn block(folded: bool, strip: bool, keep: bool, lines: &[&str]) -> String {
    let ind = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    let body: Vec<&str> = lines
        .iter()
        .map(|l| if l.len() >= ind { &l[ind..] } else { "" })
        .collect();
    let mut text = if folded {
        let mut out = String::new();
        let mut prev_text = false;
        for l in &body {
            if l.trim().is_empty() {
                out.push('\n');
                prev_text = false;
            } else {
                if prev_text {
                    out.push(' ');
                }
                out.push_str(l);
                prev_text = true;
            }
        }
        out
    } else {
        body.join("\n")
    };
    let trimmed_len = text.trim_end_matches('\n').len();
    text.truncate(trimmed_len);
    if !strip {
        text.push('\n');
    }
    let _ = keep; // trailing blank lines are not significant for name/description
    text
}

/// A single- or double-quoted scalar spanning `s` (which must be exactly one quoted value,
/// optionally followed by a comment). Line breaks inside fold to spaces.
fn quoted(s: &str) -> Option<String> {
    let mut chars = s.chars();
    let q = chars.next()?;
    let mut out = String::new();
    let mut closed = false;
    let mut rest = String::new();
    while let Some(c) = chars.next() {
        if c == q {
            if q == '\'' && chars.clone().next() == Some('\'') {
                chars.next();
                out.push('\'');
                continue;
            }
            closed = true;
            rest = chars.collect();
            break;
        }
        if c == '\\' && q == '"' {
            match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                '/' => out.push('/'),
                '0' => out.push('\0'),
                ' ' => out.push(' '),
                '\n' => {}
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                _ => return None,
            }
            continue;
        }
        if c == '\n' {
            out.push(' ');
            continue;
        }
        out.push(c);
    }
    let rest = rest.trim();
    if !closed || !(rest.is_empty() || rest.starts_with('#')) {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> BTreeMap<String, String> {
        parse(text).map(|f| f.values).unwrap_or_default()
    }

    #[test]
    fn plain_quoted_and_folded_values() {
        let v = values("---\nname: notes\ndescription: Plain text # comment\n---\nbody");
        assert_eq!(v["name"], "notes");
        assert_eq!(v["description"], "Plain text");
        let v = values("---\nname: 'it''s'\ndescription: \"a \\\"b\\\" \\u00e9\"\n---\n");
        assert_eq!(v["name"], "it's");
        assert_eq!(v["description"], "a \"b\" é");
        let v = values("---\nname: x\ndescription: >-\n  one\n  two\n\n  three\n---\n");
        assert_eq!(v["description"], "one two\nthree");
        let v = values("---\nname: x\ndescription: |\n  one\n  two\n---\n");
        assert_eq!(v["description"], "one\ntwo\n");
        let v = values("---\nname: x\ndescription: first\n  second line\n---\n");
        assert_eq!(v["description"], "first second line");
        let v = values("---\nname: x\ndescription: \"multi\n  line\"\n---\n");
        assert_eq!(v["description"], "multi line");
    }

    #[test]
    fn other_keys_and_nested_maps_are_skipped() {
        let v = values(
            "---\nname: x\nmetadata:\n  a: 1\n  b: [1, 2]\nallowed-tools: Bash\ndescription: d\n---\n",
        );
        assert_eq!(v.len(), 2);
        assert_eq!(v["description"], "d");
    }

    #[test]
    fn body_offset() {
        let t = "\u{feff}---\r\nname: x\r\n---\r\nBody here\n";
        let f = parse(t).ok();
        assert_eq!(f.map(|f| &t[f.body_start..]), Some("Body here\n"));
    }

    #[test]
    fn garbage_is_an_error() {
        assert_eq!(parse("no frontmatter"), Err(FrontmatterError::Missing));
        assert_eq!(parse("---\nname: x\n"), Err(FrontmatterError::Unterminated));
        assert_eq!(parse("---\n{{{\n---\n"), Err(FrontmatterError::BadLine(2)));
        assert_eq!(
            parse("---\nname: 'x\n---\n"),
            Err(FrontmatterError::BadQuote(2))
        );
        assert_eq!(
            parse("---\nname: x\nname: y\n---\n"),
            Err(FrontmatterError::DuplicateKey(3))
        );
        assert_eq!(
            parse("---\n  name: x\n---\n"),
            Err(FrontmatterError::BadLine(2))
        );
        let long = format!(
            "---\ndescription: {}\n---\n",
            "a".repeat(FRONTMATTER_MAX_BYTES)
        );
        assert_eq!(parse(&long), Err(FrontmatterError::TooLong));
    }
}
