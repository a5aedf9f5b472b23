use super::*;
use pretty_assertions::assert_eq;

fn texts(rows: &[Line<'_>]) -> Vec<String> {
    rows.iter()
        .map(|row| row.spans.iter().map(|s| s.content.as_ref()).collect::<String>().trim_end().to_string())
        .collect()
}

const SOURCE: &str = "Intro line.\n\n```rust\nfn a() {}\nfn b() {}\n```\n\n- x\n- y\n\nEnd with **bold** text and a [link](http://x.y).";

#[test]
fn streamed_output_matches_rendering_the_whole_text_at_once() {
    for size in [1, 2, 3, 7, 50, SOURCE.len()] {
        let mut stream = MarkdownStream::new(Tone::Answer, 30);
        let mut rows = Vec::new();
        let chars: Vec<char> = SOURCE.chars().collect();
        for piece in chars.chunks(size) {
            stream.push(&piece.iter().collect::<String>());
            rows.extend(stream.take_committed());
        }
        stream.finish();
        rows.extend(stream.take_committed());
        assert_eq!(texts(&rows), texts(&markdown::render(SOURCE, 30)), "pieces of {size}");
    }
}

#[test]
fn code_lines_commit_as_they_complete() {
    let mut stream = MarkdownStream::new(Tone::Answer, 30);
    stream.push("```sh\necho one\necho tw");
    assert_eq!(texts(&stream.take_committed()), vec!["echo one"]);
    assert_eq!(texts(&stream.live()), vec!["echo tw"]);
    stream.push("o\n");
    assert_eq!(texts(&stream.take_committed()), vec!["echo two"]);
}

#[test]
fn a_paragraph_stays_live_until_its_block_ends() {
    let mut stream = MarkdownStream::new(Tone::Answer, 30);
    stream.push("First line\nsecond line\n");
    assert!(stream.take_committed().is_empty());
    assert_eq!(texts(&stream.live()), vec!["First line second line"]);
    stream.push("\nNext");
    assert_eq!(texts(&stream.take_committed()), vec!["First line second line"]);
    assert_eq!(texts(&stream.live()), vec!["", "Next"]);
}

#[test]
fn a_tall_tail_commits_its_top_rows_and_keeps_the_rest_live() {
    let mut stream = MarkdownStream::new(Tone::Answer, 10);
    let words = "word ".repeat(30);
    stream.push(&words);
    let live = stream.prepare(3);
    assert_eq!(live.len(), 3);
    let committed = stream.take_committed();
    assert_eq!(committed.len() + stream.live().len(), markdown::render(&words, 10).len());
    assert_eq!(stream.live().len(), 3);
    stream.finish();
    let rest = stream.take_committed();
    let mut all = committed;
    all.extend(rest);
    assert_eq!(texts(&all), texts(&markdown::render(&words, 10)));
}

/// Streams `text` in two halves, committing early at `before` cells, then at `after` cells.
fn across_a_width_change(text: &str, before: usize, after: usize) -> Vec<String> {
    let mut stream = MarkdownStream::new(Tone::Answer, before);
    let half = text.len() / 2;
    stream.push(&text[..half]);
    stream.prepare(1);
    let mut rows = stream.take_committed();
    assert!(!rows.is_empty(), "the top rows were committed early");
    stream.set_width(after);
    stream.push(&text[half..]);
    let mut later = Vec::new();
    stream.prepare(1);
    later.extend(stream.take_committed());
    stream.finish();
    later.extend(stream.take_committed());
    assert!(later.iter().all(|row| row.width() <= after), "rows after the change fit: {:?}", texts(&later));
    rows.extend(later);
    texts(&rows)
}

#[test]
fn a_block_committed_in_part_keeps_every_word_when_the_width_changes() {
    let text = "Line 15 of the answer says word15 and more text here, then a few more words to wrap, \
                and a second sentence long enough to take three rows at sixty cells wide.\n\nNext.\n";
    let words: Vec<&str> = text.split_whitespace().collect();
    for (before, after) in [(20, 60), (60, 20), (40, 12)] {
        let rows = across_a_width_change(text, before, after);
        let joined = rows.join(" ");
        assert_eq!(joined.split_whitespace().collect::<Vec<_>>(), words, "{before} → {after}: {rows:?}");
    }
}

#[test]
fn reasoning_rows_are_dimmed() {
    let mut stream = MarkdownStream::new(Tone::Reasoning, 30);
    stream.push("thinking\n\n");
    let rows = stream.take_committed();
    assert!(rows[0].spans.iter().all(|s| s.style.add_modifier.contains(ratatui::style::Modifier::DIM)));
}

#[test]
fn fence_openers_and_closers() {
    assert_eq!(opens("```rust").map(|o| (o.0, o.1, o.3)), Some(('`', 3, "rust")));
    assert_eq!(opens("  ~~~~").map(|o| (o.1, o.2)), Some((4, 2)));
    assert_eq!(opens("``not"), None);
    assert_eq!(opens("```a`b"), None);
    assert!(closes("````", '`', 3));
    assert!(!closes("``", '`', 3));
}
