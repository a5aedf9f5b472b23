#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use url::Url;

use super::*;

fn base() -> Url {
    Url::parse("https://example.com/docs/page.html").unwrap()
}

#[test]
fn html_becomes_markdown_without_scripts_and_styles() {
    let html = r#"<!doctype html><html><head><title>Docs &amp;
        more</title>
        <style>body { color: red }</style><script>alert("x")</script></head>
        <body><h1>Title</h1><p>See the <a href="https://example.org/guide">guide</a>.</p>
        <ul><li>one</li><li>two</li></ul><noscript>enable js</noscript></body></html>"#;
    assert_eq!(
        to_markdown(html, &base()),
        "Title: Docs & more\n\n# Title\n\nSee the [guide](https://example.org/guide).\n\n*   one\n*   two"
    );
}

#[test]
fn a_title_already_shown_is_not_repeated() {
    let html = "<html><head><title>Guide</title></head><body><h1>Guide</h1></body></html>";
    assert_eq!(to_markdown(html, &base()), "# Guide");
    assert_eq!(to_markdown("<p>no title</p>", &base()), "no title");
}

#[test]
fn links_and_images_become_absolute() {
    let html = r#"<p><a href="intro.html">intro</a> <a href="/api?x=1#y">api</a>
        <a href="mailto:a@b.c">mail</a> <img src="../img/logo.png" alt="logo"></p>"#;
    assert_eq!(
        to_markdown(html, &base()),
        "[intro](https://example.com/docs/intro.html) [api](https://example.com/api?x=1#y) \
         [mail](mailto:a@b.c) ![logo](https://example.com/img/logo.png)"
    );
    let with_base = r#"<head><base href="https://cdn.example.net/v2/"></head><a href="x">x</a>"#;
    assert_eq!(to_markdown(with_base, &base()), "[x](https://cdn.example.net/v2/x)");
}

#[test]
fn nesting_is_estimated_from_the_tags_that_need_closing() {
    for (html, depth) in [
        ("<div><div></div><div><span>x</span></div></div>", 3),
        ("<ul><li>a<li>b<ul><li>c</ul></ul>", 2),
        ("<p>one<p>two<br><img src=x><hr>", 0),
        ("<div/><div />", 0),
        ("<!-- <div><div> --><script>let s = '<div><div>';</script>", 1),
        ("<!doctype html>a < b <div>c</div>", 1),
        ("<DIV><Div>", 2),
    ] {
        assert_eq!(nesting_estimate(html), depth, "{html}");
    }
}

#[test]
fn a_page_nested_too_deep_to_parse_has_its_tags_stripped() {
    let depth = 100_000;
    let html = format!(
        "{}deep <b>text</b> &amp;<script>x()</script>{}",
        "<div>".repeat(depth),
        "</div>".repeat(depth)
    );
    assert_eq!(
        to_markdown(&html, &base()),
        format!(
            "[the page nests its elements more than {MAX_LEXICAL_DEPTH} deep; its tags are stripped, the rest \
             is shown as it is]\n\ndeep text &amp;"
        )
    );
}

#[test]
fn a_tree_too_deep_for_markdown_is_shown_as_its_text() {
    let html =
        format!("{}deep <b>text</b><script>x()</script>{}", "<div>".repeat(1000), "</div>".repeat(1000));
    assert_eq!(
        to_markdown(&html, &base()),
        format!(
            "[the page nests its elements more than {MAX_DEPTH} deep; its text is shown without Markdown]\n\ndeep text"
        )
    );
    let shallow = format!("{}shallow{}", "<div>".repeat(MAX_DEPTH - 5), "</div>".repeat(MAX_DEPTH - 5));
    assert_eq!(to_markdown(&shallow, &base()), "shallow");
}
