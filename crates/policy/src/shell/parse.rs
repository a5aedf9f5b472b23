//! The tree walk: from tree-sitter-bash nodes to [`SimpleCommand`]s, writing redirections and
//! fork bombs, following `cd` in source order.

use tree_sitter::Node;

use super::unwrap::{Piece, SHELLS, unwrap};
use super::words::{eval, unescape_bare};
use super::{Cwd, Parsed, Redirect, SimpleCommand, Word, parse_into};

/// Targets of output redirections that write no file.
const HARMLESS_TARGETS: &[&str] =
    &["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2"];

/// Where a command's standard input comes from, when it matters (a shell reading its program).
enum Stdin {
    Inherited,
    Pipe,
    Text(Word),
    File,
}

pub(super) struct Walker<'a> {
    pub src: &'a str,
    pub depth: usize,
    pub cwd: Cwd,
    pub out: &'a mut Parsed,
}

impl Walker<'_> {
    fn text(&self, node: Node<'_>) -> &str {
        node.utf8_text(self.src.as_bytes()).unwrap_or("")
    }

    /// Visits `node`; `piped` says whether it is a later stage of a pipeline.
    pub fn walk(&mut self, node: Node<'_>, piped: bool) {
        match node.kind() {
            "command" => self.command(node, if piped { Stdin::Pipe } else { Stdin::Inherited }, &[]),
            "pipeline" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for (i, child) in children.into_iter().enumerate() {
                    self.walk(child, i > 0);
                }
            }
            "redirected_statement" => {
                let mut redirects = Vec::new();
                let mut body = None;
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    if child.kind().ends_with("_redirect") {
                        redirects.push(child);
                    } else if body.is_none() {
                        body = Some(child);
                    } else {
                        self.walk(child, false);
                    }
                }
                match body {
                    Some(body) if body.kind() == "command" => {
                        let stdin = self.stdin_of(&redirects, piped);
                        self.command(body, stdin, &redirects);
                    }
                    Some(body) => {
                        for redirect in &redirects {
                            self.redirect(*redirect);
                        }
                        self.walk(body, piped);
                    }
                    None => {
                        for redirect in &redirects {
                            self.redirect(*redirect);
                        }
                    }
                }
            }
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => self.redirect(node),
            "function_definition" => self.function(node),
            "variable_assignment" => {
                let name = node.child_by_field_name("name").map(|n| self.text(n).to_string());
                self.walk_children(node);
                self.out.commands.push(SimpleCommand {
                    words: Vec::new(),
                    assignments: name.into_iter().collect(),
                    wrappers: Vec::new(),
                    runtime_args: false,
                    piped_input: piped,
                    cwd: self.cwd.clone(),
                });
            }
            "declaration_command" | "unset_command" | "test_command" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in children {
                    // An assignment's value may hold substitutions; the assignment itself is this command's.
                    if child.kind() == "variable_assignment" {
                        self.walk_children(child)
                    } else {
                        self.walk(child, false)
                    }
                }
                let mut words = Vec::new();
                let mut assignments = Vec::new();
                let keyword = self.text(node).split_whitespace().next().unwrap_or("").to_string();
                words.push(Word::literal(keyword));
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    match child.kind() {
                        "variable_assignment" => {
                            if let Some(name) = child.child_by_field_name("name") {
                                assignments.push(self.text(name).to_string());
                            }
                        }
                        "variable_name" if node.kind() == "declaration_command" => {
                            assignments.push(self.text(child).to_string())
                        }
                        _ if node.kind() == "test_command" => {}
                        _ => words.push(eval(child, self.src)),
                    }
                }
                self.out.commands.push(SimpleCommand {
                    words,
                    assignments,
                    wrappers: Vec::new(),
                    runtime_args: false,
                    piped_input: piped,
                    cwd: self.cwd.clone(),
                });
            }
            // An unquoted heredoc's body is expanded: its substitutions run before the command.
            "heredoc_body" if self.odd_heredoc(node) => {
                self.out.unknown.push("a heredoc whose delimiter holds `$`".into());
            }
            "heredoc_body" if !self.quoted_heredoc(node) => self.substitutions(node),
            "comment" | "heredoc_body" | "heredoc_start" | "heredoc_end" => {}
            "expansion" => {
                self.walk_children(node);
                // `${x:-`cmd`}`: a backtick substitution the grammar leaves inside the expansion's
                // text runs too, and cannot be followed.
                let text = self.text(node);
                if (text.contains('`') || text.contains("$("))
                    && !has_descendant(node, "command_substitution")
                {
                    self.out.unknown.push(format!(
                        "a substitution inside `{text}` that could not be followed (write it as $(…) outside the expansion)"
                    ));
                }
            }
            _ => self.walk_children(node),
        }
    }

    /// Whether the heredoc whose body is `body` has a quoted delimiter (`<<'EOF'`: no expansion).
    fn quoted_heredoc(&self, body: Node<'_>) -> bool {
        let Some(redirect) = body.parent() else { return false };
        let mut cursor = redirect.walk();
        let start = redirect.named_children(&mut cursor).find(|n| n.kind() == "heredoc_start");
        start.is_some_and(|start| self.text(start).contains(['\'', '"', '\\']))
    }

    /// Whether the heredoc of `body` has a delimiter bash and the grammar may read differently
    /// (`<<$'EOF'`, `<<E$"O"F`, a line continuation in it): then where the body ends is not
    /// known, and the command cannot be followed.
    fn odd_heredoc(&self, body: Node<'_>) -> bool {
        let Some(redirect) = body.parent() else { return false };
        let mut cursor = redirect.walk();
        let start = redirect.named_children(&mut cursor).find(|n| n.kind() == "heredoc_start");
        start.is_some_and(|start| self.text(start).contains(['$', '\n']))
    }

    /// The substitutions inside an expanded heredoc body, walked as commands; a backtick the
    /// grammar did not parse as one cannot be followed.
    fn substitutions(&mut self, body: Node<'_>) {
        self.walk_children(body);
        let text = self.text(body);
        let parsed = has_descendant(body, "command_substitution");
        // A line continuation is joined before expansion (`$\⏎(cmd)` is `$(cmd)`).
        if text.contains("\\\n") || (!parsed && (text.contains('`') || text.contains("$("))) {
            self.out.unknown.push("a substitution in a heredoc that could not be parsed".into());
        }
    }

    fn walk_children(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            self.walk(child, false);
        }
    }

    /// Where a command reads its standard input, from its redirections.
    fn stdin_of(&self, redirects: &[Node<'_>], piped: bool) -> Stdin {
        for redirect in redirects.iter().rev() {
            match redirect.kind() {
                "herestring_redirect" => {
                    return match redirect.named_child(0) {
                        Some(value) => Stdin::Text(eval(value, self.src)),
                        None => Stdin::File,
                    };
                }
                "heredoc_redirect" => {
                    let mut cursor = redirect.walk();
                    let body = redirect.named_children(&mut cursor).find(|n| n.kind() == "heredoc_body");
                    let quoted = redirect
                        .named_children(&mut redirect.walk())
                        .find(|n| n.kind() == "heredoc_start")
                        .is_some_and(|start| self.text(start).contains(['\'', '"', '\\']));
                    return match body {
                        Some(body) => {
                            let dynamic = !quoted && body.named_child_count() > 0;
                            Stdin::Text(Word { text: self.text(body).to_string(), dynamic })
                        }
                        None => Stdin::Text(Word::literal("")),
                    };
                }
                "file_redirect" if operator(*redirect, self.src).starts_with('<') => return Stdin::File,
                _ => {}
            }
        }
        if piped { Stdin::Pipe } else { Stdin::Inherited }
    }

    fn command(&mut self, node: Node<'_>, stdin: Stdin, outer_redirects: &[Node<'_>]) {
        let mut words = Vec::new();
        let mut assignments = Vec::new();
        let mut own_redirects = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "variable_assignment" => {
                    if let Some(name) = child.child_by_field_name("name") {
                        assignments.push(self.text(name).to_string());
                    }
                    self.walk_children(child);
                }
                kind if kind.ends_with("_redirect") => own_redirects.push(child),
                _ => {
                    // Substitutions inside a word run before the command.
                    if child.kind() == "expansion" {
                        self.walk(child, false);
                    } else {
                        self.walk_children(child);
                    }
                    words.push(eval(child, self.src));
                }
            }
        }
        let stdin = match stdin {
            Stdin::Inherited | Stdin::Pipe if !own_redirects.is_empty() => {
                self.stdin_of(&own_redirects, matches!(stdin, Stdin::Pipe))
            }
            other => other,
        };
        for redirect in outer_redirects.iter().chain(&own_redirects) {
            self.redirect(*redirect);
        }
        let piped_input = matches!(stdin, Stdin::Pipe);
        for piece in unwrap(words) {
            match piece {
                Piece::Command { words, wrappers, runtime_args, assignments: env_assignments } => {
                    let program =
                        words.first().map(|w| w.text.rsplit('/').next().unwrap_or(&w.text).to_string());
                    // A shell fed its program through a here-string or here-document.
                    if let (Some(shell), Stdin::Text(script)) = (&program, &stdin)
                        && SHELLS.contains(&shell.as_str())
                        && words.len() == 1
                    {
                        self.script(script.clone());
                        continue;
                    }
                    self.follow_cd(&words);
                    let mut all = assignments.clone();
                    all.extend(env_assignments);
                    self.out.commands.push(SimpleCommand {
                        words,
                        assignments: all,
                        wrappers,
                        runtime_args,
                        piped_input,
                        cwd: self.cwd.clone(),
                    });
                }
                Piece::Script(script) => self.script(script),
                Piece::Unknown(reason) => self.out.unknown.push(reason),
            }
        }
    }

    /// Parses the string a shell or `eval` runs.
    fn script(&mut self, script: Word) {
        if script.dynamic {
            self.out.unknown.push(format!("a script string is only known at run time: `{}`", script.text));
        } else {
            parse_into(&script.text, self.depth + 1, self.cwd.clone(), self.out);
        }
    }

    /// `cd DIR` / `pushd DIR` change where later commands run.
    fn follow_cd(&mut self, words: &[Word]) {
        let Some(program) = words.first().map(|w| w.text.as_str()) else { return };
        if !matches!(program, "cd" | "pushd" | "popd") {
            return;
        }
        let target = words.iter().skip(1).find(|w| !w.text.starts_with('-') || w.text == "-");
        self.cwd = match (program, target) {
            ("popd", _) => Cwd::Unknown,
            (_, None) => Cwd::Path("~".into()),
            (_, Some(word)) if word.dynamic || word.text == "-" => Cwd::Unknown,
            (_, Some(word)) => match &self.cwd {
                Cwd::Unknown => Cwd::Unknown,
                Cwd::Start => Cwd::Path(word.text.clone()),
                Cwd::Path(_) if word.text.starts_with('/') || word.text.starts_with('~') => {
                    Cwd::Path(word.text.clone())
                }
                Cwd::Path(base) => Cwd::Path(format!("{base}/{}", word.text)),
            },
        };
    }

    fn redirect(&mut self, node: Node<'_>) {
        self.walk_children(node);
        if node.kind() != "file_redirect" {
            return;
        }
        let op = operator(node, self.src);
        let Some(destination) = node.child_by_field_name("destination") else { return };
        let target = eval(destination, self.src);
        let duplicates =
            matches!(op, ">&" | "<&") && (target.text == "-" || target.text.parse::<u32>().is_ok());
        if matches!(op, "<" | "<>") && !duplicates {
            self.out.reads.push(Redirect { target: target.clone(), cwd: self.cwd.clone() });
        }
        let writes = matches!(op, ">" | ">>" | "&>" | "&>>" | ">|" | "<>" | ">&") && !duplicates;
        if !writes || (!target.dynamic && HARMLESS_TARGETS.contains(&target.text.as_str())) {
            return;
        }
        self.out.writes.push(Redirect { target, cwd: self.cwd.clone() });
    }

    /// A function whose body runs itself in the background or through a pipe is a fork bomb.
    fn function(&mut self, node: Node<'_>) {
        let name = node.child_by_field_name("name").map(|n| unescape_bare(self.text(n))).unwrap_or_default();
        if let Some(body) = node.child_by_field_name("body") {
            let body_text = self.text(body);
            let calls_itself = !name.is_empty()
                && body_text
                    .split(|c: char| {
                        c.is_whitespace() || matches!(c, '|' | '&' | ';' | '{' | '}' | '(' | ')')
                    })
                    .any(|word| word == name);
            if calls_itself && (body_text.contains('|') || body_text.contains('&')) {
                self.out.fork_bombs.push(name.clone());
            }
            self.walk(body, false);
        }
    }
}

/// The operator token of a redirection (`>`, `>>`, `2>&1`'s `>&`, `<`, …).
fn operator<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if !child.is_named() {
            return child.utf8_text(src.as_bytes()).unwrap_or("");
        }
    }
    ""
}

/// Whether `node` has a descendant of `kind`.
fn has_descendant(node: Node<'_>, kind: &str) -> bool {
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    children.into_iter().any(|child| child.kind() == kind || has_descendant(child, kind))
}
