//! `lathe memory …` and `/memory`: listing, showing, forgetting, promoting and exporting entries,
//! and explaining the last recall ([`why`]). Front ends print what these return.

use std::path::Path;

use lathe_protocol::memory::MemoryRecall;
use lathe_protocol::{LedgerItem, Meta};
use serde_json::{Value, json};

use super::entry::Entry;
use super::{MemoryError, Roots, clean_body, clean_line, store};
use crate::paths;

/// The scopes of a session in `workspace` with Lathe's home at `home`.
pub fn roots(home: &Path, workspace: &Path) -> Roots {
    Roots::for_workspace(home, workspace)
}

/// Every entry of every scope, in scope and file order, and the load warnings.
pub fn list(roots: &Roots) -> (Vec<Entry>, Vec<String>) {
    let loaded = store::load(roots);
    (loaded.entries, loaded.warnings)
}

/// The entry with id `id` (`project/pnpm`; `project/pnpm.md` works too; an id as listed, with
/// control characters removed, names its entry too).
///
/// # Errors
/// [`MemoryError`] naming the id when no entry has it.
pub fn find(roots: &Roots, id: &str) -> Result<Entry, MemoryError> {
    let id = id.trim().trim_start_matches("/memories/").trim_end_matches(".md");
    let (entries, _) = list(roots);
    entries
        .into_iter()
        .find(|entry| entry.id() == id || clean_line(&entry.id()) == id)
        .ok_or_else(|| MemoryError::UnknownId { id: clean_line(id) })
}

/// Deletes the entry `id` and updates its scope's index.
///
/// # Errors
/// No such entry, or a file that cannot be removed or written.
pub fn forget(roots: &Roots, id: &str) -> Result<String, MemoryError> {
    let planned = super::remove(roots, &listed_id(roots, id))?;
    super::apply(&planned)?;
    store::refresh_records(roots);
    Ok(planned.line)
}

/// Copies the project-private entry `id` into the repository's shared `.lathe/memory/`.
///
/// # Errors
/// No such entry, no repository, or a file that cannot be written.
pub fn promote(roots: &Roots, id: &str) -> Result<String, MemoryError> {
    let planned = super::promote(roots, &listed_id(roots, id))?;
    super::apply(&planned)?;
    Ok(planned.line)
}

/// The real id of the entry listed as `id` (the same id unless its file name holds characters
/// the listing leaves out).
fn listed_id(roots: &Roots, id: &str) -> String {
    find(roots, id).map_or_else(|_| id.to_string(), |entry| entry.id())
}

/// One entry as JSON: its id, scope, file, frontmatter fields and body.
pub fn to_json(entry: &Entry) -> Value {
    let mut value = serde_json::to_value(&entry.meta).unwrap_or_else(|_| json!({}));
    if let Value::Object(map) = &mut value {
        map.insert("id".into(), json!(entry.id()));
        map.insert("scope".into(), json!(entry.scope.as_str()));
        map.insert("path".into(), json!(entry.path.display().to_string()));
        map.insert("body".into(), json!(entry.body));
        if let Some(warning) = &entry.warning {
            map.insert("warning".into(), json!(warning));
        }
    }
    value
}

/// The recall of the latest session of `workspace`: the last user turn's recall record, or `None`
/// when that turn got no entry (only the index). `Err` says why there is nothing to explain.
pub fn why(home: &Path, workspace: &Path) -> Result<Option<MemoryRecall>, String> {
    let dir = paths::sessions_dir(home, workspace);
    let path = crate::session::latest(&dir).map_err(|error| error.to_string())?;
    let loaded = crate::session::load(&path).map_err(|error| error.to_string())?;
    let last_user = loaded.items.iter().rposition(
        |item| matches!(item, LedgerItem::User(user) if user.origin == lathe_protocol::UserOrigin::User),
    );
    let Some(last_user) = last_user else { return Err(format!("{}: no prompt yet", path.display())) };
    Ok(loaded.items[last_user..].iter().find_map(|item| match item {
        LedgerItem::Meta(Meta::MemoryRecall(recall)) => Some(recall.clone()),
        _ => None,
    }))
}

/// `why`'s answer in words: one line per entry given, with its score and the terms it matched.
pub fn explain(recall: Option<&MemoryRecall>) -> String {
    let Some(recall) = recall else {
        return "the last request of the latest session got no memory entry (only the index)\n".to_string();
    };
    let mut text = format!("turn {}: {} entries given\n", recall.turn, recall.entries.len());
    for entry in &recall.entries {
        let mut line =
            format!("  {}  score {:.2}  matched: {}", entry.id, entry.score, entry.terms.join(", "));
        if !entry.stale.is_empty() {
            line.push_str(&format!("  (possibly stale: {} changed)", entry.stale.join(", ")));
        }
        text.push_str(&clean_line(&line));
        text.push('\n');
    }
    text
}

/// The workspace and scopes `flags` name (`-C DIR`, else the current directory), with Lathe's
/// home at `home` (default `$LATHE_HOME` or `~/.lathe`).
///
/// # Errors
/// The workspace does not exist.
pub fn locate(
    flags: &crate::Flags,
    home: Option<&Path>,
) -> Result<(std::path::PathBuf, Roots), crate::StartError> {
    let workspace = crate::host::workspace(flags.dir.as_deref())?;
    let home = home.map_or_else(paths::lathe_home, Path::to_path_buf);
    let roots = roots(&home, &workspace);
    Ok((workspace, roots))
}

/// `/memory [list | show ID | forget ID]` in the terminal UI: the text to show.
pub fn slash(roots: &Roots, argument: Option<&str>) -> Result<String, MemoryError> {
    let argument = argument.unwrap_or("list").trim();
    let (verb, id) = argument.split_once(char::is_whitespace).unwrap_or((argument, ""));
    match (verb, id.trim()) {
        ("list" | "", _) => {
            let (entries, warnings) = list(roots);
            let mut text = if entries.is_empty() {
                "no memories yet (the model saves them with the memory tool when you ask it to remember something)\n"
                    .to_string()
            } else {
                format!("{} memories (/memory show ID, /memory forget ID):\n", entries.len())
            };
            for entry in &entries {
                text.push_str(&format!(
                    "  {}  [{}]  {}\n",
                    clean_line(&entry.id()),
                    entry.meta.kind.as_str(),
                    clean_line(&entry.meta.description)
                ));
            }
            for warning in warnings {
                text.push_str(&format!("  warning: {}\n", clean_line(&warning)));
            }
            Ok(text)
        }
        ("show" | "open", id) if !id.is_empty() => {
            let entry = find(roots, id)?;
            let title = clean_line(&format!("{} ({})", entry.id(), entry.path.display()));
            Ok(format!("{title}\n{}", clean_body(&entry.body)))
        }
        ("forget" | "rm", id) if !id.is_empty() => forget(roots, id),
        _ => Err(MemoryError::InvalidArgument {
            message: format!("`/memory {argument}`: use /memory, /memory show ID or /memory forget ID"),
        }),
    }
}
