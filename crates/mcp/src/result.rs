//! Converting an MCP `CallToolResult` into Lathe content (STYLE.md "Core types are ours": rmcp's
//! types stop here).
//!
//! - text → text; images → images (base64 as sent);
//! - audio → a line saying what was left out (no provider takes audio in a tool result);
//! - an embedded text resource → its text under a `resource <uri>` line; a binary one → a line
//!   with its URI, type and size;
//! - a resource link → a line with its name, URI, type and description;
//! - `structuredContent` → its JSON as text, unless a text block already carries the same JSON
//!   (servers are asked to send both);
//! - `isError` → the output is an error for the model.

use lathe_protocol::Content;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

use crate::tool::McpOutput;

/// Converts one result.
pub fn convert(result: CallToolResult) -> McpOutput {
    let mut content = Vec::with_capacity(result.content.len() + 1);
    for block in result.content {
        content.push(convert_block(block));
    }
    if let Some(structured) = result.structured_content {
        let repeated = content.iter().any(|block| match block {
            Content::Text { text } => serde_json::from_str::<Value>(text).is_ok_and(|v| v == structured),
            Content::Image { .. } | Content::Thinking(_) | Content::ToolCall(_) => false,
        });
        if !repeated {
            let json = serde_json::to_string_pretty(&structured).unwrap_or_else(|_| structured.to_string());
            let text = if content.is_empty() { json } else { format!("structured content:\n{json}") };
            content.push(Content::text(text));
        }
    }
    if content.is_empty() {
        content.push(Content::text("(the tool returned no content)"));
    }
    McpOutput { content, is_error: result.is_error.unwrap_or(false) }
}

fn convert_block(block: ContentBlock) -> Content {
    match block {
        ContentBlock::Text(text) => Content::text(text.text),
        ContentBlock::Image(image) => Content::Image { media_type: image.mime_type, data: image.data },
        ContentBlock::Audio(audio) => Content::text(format!(
            "[audio ({}, {} bytes of base64) left out: audio cannot be shown to the model]",
            audio.mime_type,
            audio.data.len()
        )),
        ContentBlock::Resource(embedded) => match embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                Content::text(format!("resource {uri}:\n{text}"))
            }
            ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => Content::text(format!(
                "[binary resource {uri} ({}, {} bytes of base64) left out]",
                mime_type.as_deref().unwrap_or("unknown type"),
                blob.len()
            )),
            other => Content::text(format!("[resource of an unknown kind: {}]", serde_json::json!(other))),
        },
        ContentBlock::ResourceLink(link) => {
            let mut line = format!("resource link: {} <{}>", link.name, link.uri);
            if let Some(mime) = &link.mime_type {
                line.push_str(&format!(" ({mime})"));
            }
            if let Some(description) = &link.description {
                line.push_str(&format!(" — {description}"));
            }
            Content::text(line)
        }
        other => {
            Content::text(format!("[content of a kind Lathe does not know: {}]", serde_json::json!(other)))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn result(value: Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn every_content_kind_maps_to_text_or_image() {
        let out = convert(result(json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAEC"}},
            {"type": "resource_link", "uri": "file:///c.md", "name": "c.md", "mimeType": "text/markdown",
             "description": "the third"}
        ]})));
        assert!(!out.is_error);
        assert_eq!(
            out.content,
            vec![
                Content::text("hello"),
                Content::Image { media_type: "image/png".into(), data: "iVBORw0KGgo=".into() },
                Content::text(
                    "[audio (audio/wav, 4 bytes of base64) left out: audio cannot be shown to the model]"
                ),
                Content::text("resource file:///a.txt:\nA"),
                Content::text("[binary resource file:///b.bin (unknown type, 4 bytes of base64) left out]"),
                Content::text("resource link: c.md <file:///c.md> (text/markdown) — the third"),
            ]
        );
    }

    #[test]
    fn structured_content_is_added_once_and_is_error_is_kept() {
        let both = convert(result(json!({
            "content": [{"type": "text", "text": "{\"sum\": 3}"}], "structuredContent": {"sum": 3}})));
        assert_eq!(both.content, vec![Content::text("{\"sum\": 3}")]);
        let only = convert(result(json!({"content": [], "structuredContent": {"sum": 3}})));
        assert_eq!(only.content, vec![Content::text("{\n  \"sum\": 3\n}")]);
        let error = convert(result(json!({"content": [{"type": "text", "text": "no"}], "isError": true})));
        assert!(error.is_error);
        let empty = convert(result(json!({"content": []})));
        assert_eq!(empty.content, vec![Content::text("(the tool returned no content)")]);
    }
}
