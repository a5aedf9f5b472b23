#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::test_support::{PIXEL_PNG, Workspace};
use lathe_protocol::Content;
use pretty_assertions::assert_eq;
use serde_json::json;

#[tokio::test]
async fn lines_are_numbered_like_cat_n() {
    let ws = Workspace::new();
    ws.put("a.txt", b"first\n\tsecond\n");
    let out = ws.ok("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(out, "     1\tfirst\n     2\t\tsecond\n");
}

#[tokio::test]
async fn crlf_endings_and_a_missing_final_newline_are_marked() {
    let ws = Workspace::new();
    ws.put("crlf.txt", b"first\r\nsecond\r\n");
    let out = ws.ok("read_file", json!({"path": "crlf.txt"})).await;
    assert_eq!(out, "     1\tfirst\n     2\tsecond\n\n[line endings: CRLF]");
    ws.put("h.txt", b"hello");
    ws.put("hn.txt", b"hello\n");
    let without = ws.ok("read_file", json!({"path": "h.txt"})).await;
    let with = ws.ok("read_file", json!({"path": "hn.txt"})).await;
    assert_eq!(with, "     1\thello\n");
    assert_eq!(without, "     1\thello\n\\ No newline at end of file\n");
    // The marker only follows the file's real last line.
    ws.put("two.txt", b"a\nb");
    let first_only = ws.ok("read_file", json!({"path": "two.txt", "limit": 1})).await;
    assert!(!first_only.contains("No newline"), "{first_only}");
}

#[tokio::test]
async fn offset_and_limit_select_lines_and_the_footer_says_how_to_read_on() {
    let ws = Workspace::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    ws.put("a.txt", text);
    let out = ws.ok("read_file", json!({"path": "a.txt", "offset": 3, "limit": 2})).await;
    assert_eq!(out, "     3\tline 3\n     4\tline 4\n\n[showing lines 3-4 of 10; read on with offset=5]");
    let out = ws.ok("read_file", json!({"path": "a.txt", "offset": 11})).await;
    assert!(out.contains("past the end"), "{out}");
}

#[tokio::test]
async fn a_partial_read_counts_as_a_read_for_editing() {
    let ws = Workspace::new();
    ws.put("a.txt", b"one\ntwo\nthree\n");
    ws.ok("read_file", json!({"path": "a.txt", "offset": 2, "limit": 1})).await;
    ws.ok("edit_file", json!({"path": "a.txt", "old_string": "three", "new_string": "3"})).await;
    assert_eq!(ws.bytes("a.txt"), b"one\ntwo\n3\n");
}

#[tokio::test]
async fn long_lines_are_cut() {
    let ws = Workspace::new();
    ws.put("a.txt", format!("{}\nshort\n", "x".repeat(5000)));
    let out = ws.ok("read_file", json!({"path": "a.txt"})).await;
    let first = out.lines().next().unwrap();
    assert!(first.starts_with(&format!("     1\t{}", "x".repeat(2000))));
    assert!(!first.contains(&"x".repeat(2001)));
    assert!(
        first.ends_with("[line cut: 5000 chars in total; read on with offset=1, column=2001]"),
        "{first}"
    );
    assert!(out.contains("     2\tshort"));
}

#[tokio::test]
async fn a_long_line_can_be_paged_by_column() {
    let ws = Workspace::new();
    let mut line = "a".repeat(2_000_000);
    line.replace_range(1_500_000..1_500_006, "NEEDLE");
    ws.put("min.js", &line);
    let out = ws.ok("read_file", json!({"path": "min.js", "column": 1_499_991})).await;
    let first = out.lines().next().unwrap();
    assert!(first.starts_with("     1\t[from column 1499991] aaaaaaaaaaNEEDLEaaa"), "{}", &first[..80]);
    assert!(
        first.ends_with("[line cut: 2000000 chars in total; read on with offset=1, column=1501991]"),
        "{}",
        &first[first.len() - 100..]
    );
    let end = ws.ok("read_file", json!({"path": "min.js", "column": 1_999_999})).await;
    assert_eq!(end, "     1\t[from column 1999999] aa\n\\ No newline at end of file\n");
    let past = ws.ok("read_file", json!({"path": "min.js", "column": 3_000_000})).await;
    assert!(past.contains("column 3000000 is past its end"), "{past}");
}

#[tokio::test]
async fn a_50_mb_single_line_file_does_not_flood_the_context() {
    let ws = Workspace::new();
    ws.put("big.txt", "y".repeat(50 * 1024 * 1024));
    let out = ws.ok("read_file", json!({"path": "big.txt"})).await;
    assert!(out.len() < 4_000, "{} bytes returned", out.len());
    assert!(out.contains("line cut: 52428800 chars"), "{}", &out[out.len() - 100..]);
}

#[tokio::test]
async fn output_is_capped_at_256_kib_with_a_footer() {
    let ws = Workspace::new();
    let text: String = (1..=5000).map(|i| format!("{i:05} {}\n", "z".repeat(200))).collect();
    ws.put("a.txt", text);
    let out = ws.ok("read_file", json!({"path": "a.txt", "limit": 5000})).await;
    assert!(out.len() <= 256 * 1024 + 200, "{}", out.len());
    let footer = out.lines().last().unwrap();
    assert!(footer.starts_with("[output capped at 256 KiB after line "), "{footer}");
    let last_line: usize =
        footer["[output capped at 256 KiB after line ".len()..].split(' ').next().unwrap().parse().unwrap();
    assert!(footer.contains(&format!("offset={}", last_line + 1)), "{footer}");
}

#[tokio::test]
async fn utf16le_with_bom_is_read_as_text() {
    let ws = Workspace::new();
    let mut bytes = vec![0xFF, 0xFE];
    "héllo\r\nwörld\r\n".encode_utf16().for_each(|u| bytes.extend_from_slice(&u.to_le_bytes()));
    ws.put("w.txt", bytes);
    let out = ws.ok("read_file", json!({"path": "w.txt"})).await;
    assert_eq!(out, "     1\théllo\n     2\twörld\n\n[encoding: UTF-16LE with BOM]\n[line endings: CRLF]");
}

#[tokio::test]
async fn binary_files_are_refused_with_a_reason() {
    let ws = Workspace::new();
    ws.put("prog.bin", b"\x7fELF\x02\x01\x01\0\0\0\0");
    let err = ws.fails("read_file", json!({"path": "prog.bin"})).await;
    assert!(err.contains("binary") && err.contains("NUL"), "{err}");
}

#[tokio::test]
async fn images_are_returned_as_image_content() {
    let ws = Workspace::new();
    ws.put("pic.PNG", PIXEL_PNG);
    let out = ws.call("read_file", json!({"path": "pic.PNG"})).await.unwrap();
    use base64::Engine as _;
    assert_eq!(
        out.content,
        vec![Content::Image {
            media_type: "image/png".into(),
            data: base64::engine::general_purpose::STANDARD.encode(PIXEL_PNG)
        }]
    );
}

#[tokio::test]
async fn an_image_that_does_not_decode_becomes_a_text_note() {
    let ws = Workspace::new();
    // The PNG signature and its IHDR chunk, nothing after them.
    ws.put("shot.png", &PIXEL_PNG[..33]);
    let out = ws.call("read_file", json!({"path": "shot.png"})).await.unwrap();
    let text = out.text_content();
    assert!(!out.content.iter().any(|c| matches!(c, Content::Image { .. })), "{:?}", out.content);
    assert!(
        text.contains("shot.png was not shown as an image") && text.contains("does not decode"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1, "{text}");
}

#[tokio::test]
async fn a_file_named_like_an_image_is_an_image_only_if_its_bytes_say_so() {
    let ws = Workspace::new();
    ws.put("logo.png", b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12345\n");
    let out = ws.call("read_file", json!({"path": "logo.png"})).await.unwrap();
    assert!(out.text_content().contains("git-lfs"), "{:?}", out.content);
    let mut jpeg = Vec::new();
    image::RgbImage::new(2, 2)
        .write_to(&mut std::io::Cursor::new(&mut jpeg), image::ImageFormat::Jpeg)
        .unwrap();
    ws.put("photo.png", &jpeg);
    let out = ws.call("read_file", json!({"path": "photo.png"})).await.unwrap();
    assert!(
        matches!(&out.content[0], Content::Image { media_type, .. } if media_type == "image/jpeg"),
        "{:?}",
        out.content
    );
    ws.put("empty.gif", b"");
    let out = ws.call("read_file", json!({"path": "empty.gif"})).await.unwrap();
    assert_eq!(out.text_content(), "(empty file)");
}

#[tokio::test]
async fn directories_are_listed_and_missing_paths_are_errors() {
    let ws = Workspace::new();
    ws.put("src/lib.rs", b"");
    ws.put("README.md", b"");
    let out = ws.ok("read_file", json!({"path": "."})).await;
    assert_eq!(out, ". is a directory:\n  README.md\n  src/\n");
    let err = ws.fails("read_file", json!({"path": "nope/missing.rs"})).await;
    assert!(err.contains("nope/missing.rs") && err.contains("does not exist"), "{err}");
}

#[tokio::test]
async fn gitignored_files_are_hidden_from_grep_and_glob_but_readable_by_name() {
    let ws = Workspace::new();
    ws.put(".gitignore", b"secret.env\n");
    ws.put("secret.env", b"TOKEN=abc\n");
    ws.put("config.env", b"TOKEN=public\n");
    assert_eq!(ws.ok("grep", json!({"pattern": "TOKEN"})).await, "config.env:1:TOKEN=public\n");
    assert_eq!(ws.ok("glob", json!({"pattern": "*.env"})).await, "config.env\n");
    let out = ws.ok("read_file", json!({"path": "secret.env"})).await;
    assert_eq!(out, "     1\tTOKEN=abc\n");
}

fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(rc, 0, "mkfifo failed: {}", std::io::Error::last_os_error());
}

/// Writes `text` to the FIFO once a reader has opened it, from an async task: if a read blocked
/// the (single) runtime thread, this task could never run and the test would hit its timeout.
async fn feed_fifo(path: std::path::PathBuf, text: &'static str) {
    use tokio::io::AsyncWriteExt;
    let mut sender = loop {
        match tokio::net::unix::pipe::OpenOptions::new().open_sender(&path) {
            Ok(sender) => break sender,
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    };
    sender.write_all(text.as_bytes()).await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn fifos_are_read_without_blocking_other_calls() {
    let ws = Workspace::new();
    mkfifo(&ws.path("one.fifo"));
    mkfifo(&ws.path("two.fifo"));
    let both = async {
        tokio::join!(
            ws.call("read_file", json!({"path": "one.fifo"})),
            ws.call("read_file", json!({"path": "two.fifo"})),
            feed_fifo(ws.path("two.fifo"), "from two\n"),
            async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                feed_fifo(ws.path("one.fifo"), "from one\n").await
            },
        )
    };
    let (one, two, (), ()) = tokio::time::timeout(Duration::from_secs(10), both).await.expect("no deadlock");
    assert_eq!(one.unwrap().text_content(), "     1\tfrom one\n");
    assert_eq!(two.unwrap().text_content(), "     1\tfrom two\n");
}

#[tokio::test]
async fn a_read_blocked_on_a_fifo_returns_on_cancel() {
    let ws = Workspace::new();
    mkfifo(&ws.path("stuck.fifo"));
    let cancel = ws.ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let result =
        tokio::time::timeout(Duration::from_secs(5), ws.call("read_file", json!({"path": "stuck.fifo"})))
            .await
            .expect("returns after cancel");
    assert!(matches!(result, Err(crate::ToolError::Cancelled)), "{result:?}");
    // Unblock the leftover blocking thread so the test process exits cleanly.
    let _ = std::fs::OpenOptions::new().write(true).open(ws.path("stuck.fifo"));
}
