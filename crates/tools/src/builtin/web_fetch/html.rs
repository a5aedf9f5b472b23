//! HTML to Markdown for `web_fetch` (htmd), safe on any page.
//!
//! The page's `<title>` heads the text when the text does not already show it; links and image
//! sources become absolute (against `<base href>` when the page has one) so the model can fetch
//! them; scripts, styles and other markup that carries no text are left out.
//!
//! A hostile page must not hang or crash Lathe: html5ever's tree builder spends time in the square
//! of the nesting depth and htmd walks the tree recursively. So a page whose start tags, read
//! lexically, nest deeper than [`MAX_LEXICAL_DEPTH`] is not parsed at all (its tags are stripped),
//! and a parsed tree deeper than [`MAX_DEPTH`] is shown as its text nodes.

use std::rc::Rc;

use markup5ever_rcdom::{Node, NodeData};
use url::Url;

/// Tags whose content is not text a reader sees.
const SKIPPED_TAGS: &[&str] = &["script", "style", "noscript", "template", "svg", "canvas", "iframe", "head"];

/// Deepest element nesting converted to Markdown; a deeper document (which would exhaust the stack
/// of htmd's recursive walk) is shown as plain text.
pub const MAX_DEPTH: usize = 256;

/// `html`, fetched from `base`, as Markdown (htmd): headed by the page's `<title>` when the text
/// does not already show it, links and image sources made absolute (against `<base href>` when
/// the page has one), scripts, styles and the like left out.
pub fn to_markdown(html: &str, base: &Url) -> String {
    if nesting_estimate(html) > MAX_LEXICAL_DEPTH {
        let mut text = String::new();
        scan(html, Some(&mut text));
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        return format!(
            "[the page nests its elements more than {MAX_LEXICAL_DEPTH} deep; its tags are stripped, \
             the rest is shown as it is]\n\n{text}"
        );
    }
    let converter = htmd::HtmlToMarkdown::builder().skip_tags(SKIPPED_TAGS.to_vec()).build();
    let parsed = converter.html_to_tree(html);
    // html_to_tree cannot fail (it parses a string in memory); were it to, the page is text.
    let Ok(tree) = parsed else { return html.to_string() };
    let nodes = preorder(&tree);
    if nodes.iter().any(|(_, depth)| *depth > MAX_DEPTH) {
        return format!(
            "[the page nests its elements more than {MAX_DEPTH} deep; its text is shown without Markdown]\n\n{}",
            plain_text(&nodes)
        );
    }
    let base =
        element_attr(&nodes, "base", "href").and_then(|href| base.join(&href).ok()).unwrap_or(base.clone());
    for (node, _) in &nodes {
        absolutize(node, &base);
    }
    let markdown = converter.tree_to_markdown(&tree);
    match title(&nodes) {
        Some(title) if !markdown.contains(&title) => format!("Title: {title}\n\n{markdown}"),
        Some(_) | None => markdown,
    }
}

/// Every node of `tree` with its depth, in document order, walked without recursion.
fn preorder(tree: &Rc<Node>) -> Vec<(Rc<Node>, usize)> {
    let mut out = Vec::new();
    let mut stack = vec![(tree.clone(), 0)];
    while let Some((node, depth)) = stack.pop() {
        stack.extend(node.children.borrow().iter().rev().map(|child| (child.clone(), depth + 1)));
        out.push((node, depth));
    }
    out
}

/// The tag name of an element node.
fn tag(node: &Node) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

/// The attribute `attr` of the first `tag` element.
fn element_attr(nodes: &[(Rc<Node>, usize)], name: &str, attr: &str) -> Option<String> {
    nodes.iter().find_map(|(node, _)| match &node.data {
        NodeData::Element { name: qual, attrs, .. } if &*qual.local == name => {
            attrs.borrow().iter().find(|a| &*a.name.local == attr).map(|a| a.value.to_string())
        }
        _ => None,
    })
}

/// Rewrites a link's `href` or an image's `src` to the absolute http(s) URL it points to.
fn absolutize(node: &Node, base: &Url) {
    let NodeData::Element { name, attrs, .. } = &node.data else { return };
    let key = match &*name.local {
        "a" | "area" => "href",
        "img" => "src",
        _ => return,
    };
    for attr in attrs.borrow_mut().iter_mut().filter(|a| &*a.name.local == key) {
        if let Ok(absolute) = base.join(attr.value.trim())
            && matches!(absolute.scheme(), "http" | "https")
        {
            attr.value = absolute.as_str().into();
        }
    }
}

/// The text of the first `<title>`, whitespace collapsed (what a browser's tab shows).
fn title(nodes: &[(Rc<Node>, usize)]) -> Option<String> {
    let at = nodes.iter().position(|(node, _)| tag(node) == Some("title"))?;
    let (_, depth) = &nodes[at];
    let text =
        plain_text(&nodes[at + 1..].iter().take_while(|(_, d)| d > depth).cloned().collect::<Vec<_>>());
    (!text.is_empty()).then_some(text)
}

/// The text nodes of `nodes` (outside [`SKIPPED_TAGS`]), whitespace collapsed.
fn plain_text(nodes: &[(Rc<Node>, usize)]) -> String {
    let mut words = Vec::new();
    let mut skip_below: Option<usize> = None;
    for (node, depth) in nodes {
        if skip_below.is_some_and(|d| *depth <= d) {
            skip_below = None;
        }
        if skip_below.is_some() {
            continue;
        }
        match &node.data {
            NodeData::Element { name, .. }
                if SKIPPED_TAGS.contains(&&*name.local) && &*name.local != "head" =>
            {
                skip_below = Some(*depth);
            }
            NodeData::Text { contents } => {
                words.extend(contents.borrow().split_whitespace().map(str::to_string))
            }
            _ => {}
        }
    }
    words.join(" ")
}

/// Deepest nesting of start tags, read lexically ([`nesting_estimate`]), that is parsed at all.
pub const MAX_LEXICAL_DEPTH: usize = 4096;

/// Elements without content (no end tag) and elements whose end tag may be left out: they are not
/// counted by [`nesting_estimate`] (those that nest need a counted element between them: `ul`,
/// `table`, `dl`).
const UNCOUNTED: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
    "param", "keygen", "p", "li", "dt", "dd", "tr", "td", "th", "thead", "tbody", "tfoot", "option",
    "optgroup", "rt", "rp", "colgroup", "caption", "html", "head", "body",
];

/// Elements whose content is text, not markup (`<script>` may contain `<div>` in a string).
const RAW_TEXT: &[&str] = &["script", "style", "textarea", "title", "xmp", "noscript", "iframe", "plaintext"];

/// How deep `html`'s start tags nest, read lexically in one pass: each counted start tag opens a
/// level, each end tag closes one; comments and raw-text elements are skipped. `strip` collects
/// the text between the tags (for a page too deep to parse).
fn scan(html: &str, mut strip: Option<&mut String>) -> usize {
    let (mut depth, mut deepest, mut at) = (0usize, 0usize, 0usize);
    while let Some(offset) = html[at..].find('<') {
        let open = at + offset;
        if let Some(text) = strip.as_deref_mut() {
            text.push_str(&html[at..open]);
        }
        let rest = &html[open + 1..];
        if let Some(comment) = rest.strip_prefix("!--") {
            at = comment.find("-->").map_or(html.len(), |end| html.len() - comment.len() + end + 3);
            continue;
        }
        if rest.starts_with(['!', '?']) {
            // A doctype or processing instruction.
            at = html[open..].find('>').map_or(html.len(), |end| open + end + 1);
            continue;
        }
        let closing = rest.starts_with('/');
        let after = &rest[usize::from(closing)..];
        let name = &after[..after.bytes().take_while(u8::is_ascii_alphanumeric).count()];
        let listed = |list: &[&str]| list.iter().any(|listed| listed.eq_ignore_ascii_case(name));
        if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
            // Not a tag (`a < b`): text.
            if let Some(text) = strip.as_deref_mut() {
                text.push('<');
            }
            at = open + 1;
            continue;
        }
        let Some(end) = html[open..].find('>').map(|end| open + end) else {
            at = html.len();
            break;
        };
        at = end + 1;
        if listed(UNCOUNTED) {
            continue;
        }
        if closing {
            depth = depth.saturating_sub(1);
        } else if !html[..end].ends_with('/') {
            depth += 1;
            deepest = deepest.max(depth);
            if listed(RAW_TEXT) {
                let lower = html[at..].to_ascii_lowercase();
                let close = format!("</{}", name.to_ascii_lowercase());
                at = lower.find(&close).map_or(html.len(), |i| at + i);
            }
        }
    }
    if let Some(text) = strip {
        text.push_str(&html[at.min(html.len())..]);
    }
    deepest
}

/// How deep `html`'s elements nest, read lexically ([`scan`]): an estimate that bounds what
/// parsing it costs.
pub fn nesting_estimate(html: &str) -> usize {
    scan(html, None)
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
