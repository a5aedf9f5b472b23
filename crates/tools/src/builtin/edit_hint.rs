//! What to tell the model when `old_string` is not in the file: where the text would match if
//! whitespace were ignored, or else the lines most similar to its first line.

use similar::TextDiff;

/// Lines compared when looking for similar ones (bounds the cost on huge files).
const MAX_LINES_SCANNED: usize = 20_000;

/// A hint naming the nearest candidates for `old` in `text` (line numbers are 1-based).
pub(crate) fn nearest_candidates(text: &str, old: &str) -> String {
    let file_lines: Vec<&str> = text.lines().collect();
    let old_lines: Vec<&str> = old.lines().collect();
    if let Some(start) = whitespace_insensitive_match(&file_lines, &old_lines) {
        let end = start + old_lines.len() - 1;
        let range = if end == start {
            format!("line {}", start + 1)
        } else {
            format!("lines {}-{}", start + 1, end + 1)
        };
        return format!(
            "It matches {range} if whitespace is ignored: copy the exact indentation (tabs vs spaces) \
             and line ends from read_file."
        );
    }
    let Some(first) = old_lines.iter().map(|l| l.trim()).find(|l| !l.is_empty()) else {
        return "old_string is only whitespace; include visible text.".to_string();
    };
    let mut scored: Vec<(f32, usize)> = file_lines
        .iter()
        .take(MAX_LINES_SCANNED)
        .enumerate()
        .filter_map(|(i, line)| {
            let line = line.trim();
            if line.is_empty() || line.len() > first.len() * 3 + 20 || first.len() > line.len() * 3 + 20 {
                return None;
            }
            let ratio = TextDiff::from_chars(first, line).ratio();
            (ratio >= 0.5).then_some((ratio, i))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    if scored.is_empty() {
        return "No similar line was found; read the file again and copy the exact text.".to_string();
    }
    let shown: Vec<String> = scored
        .iter()
        .take(3)
        .map(|&(ratio, i)| {
            let line: String = file_lines[i].chars().take(200).collect();
            format!("  line {} ({:.0}% similar): {line}", i + 1, ratio * 100.0)
        })
        .collect();
    format!(
        "The closest lines to its first line are:\n{}\nRead the file again and copy the exact text, including whitespace.",
        shown.join("\n")
    )
}

/// The first index where `old` matches `file` line by line with surrounding whitespace ignored.
fn whitespace_insensitive_match(file: &[&str], old: &[&str]) -> Option<usize> {
    if old.is_empty() || old.len() > file.len() || old.iter().all(|l| l.trim().is_empty()) {
        return None;
    }
    (0..=file.len() - old.len())
        .find(|&start| old.iter().zip(&file[start..]).all(|(a, b)| a.trim() == b.trim()))
}
