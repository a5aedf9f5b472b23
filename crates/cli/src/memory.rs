//! `lathe memory list|show|rm|why|promote|export`: long-term memory from the command line (the
//! work is `lathe_core::memory::manage`'s; this prints it).

use lathe_core::memory::{clean_body, clean_line, manage};

use crate::args::{Cli, EXIT_FAILED, EXIT_OK, EXIT_USAGE, MemoryAction};

/// Runs one `lathe memory` action; returns the exit status.
pub fn command(cli: &Cli, action: &MemoryAction) -> u8 {
    let home = lathe_core::paths::lathe_home();
    let (workspace, roots) = match manage::locate(&cli.flags(), Some(&home)) {
        Ok(found) => found,
        Err(error) => {
            eprintln!("lathe: error: {error}");
            return EXIT_USAGE;
        }
    };
    let failed = |error: &dyn std::fmt::Display| {
        eprintln!("lathe: error: {error}");
        EXIT_FAILED
    };
    match action {
        MemoryAction::List { json } => {
            let (entries, warnings) = manage::list(&roots);
            for warning in &warnings {
                eprintln!("lathe: warning: {}", clean_line(warning));
            }
            if *json {
                let values: Vec<_> = entries.iter().map(manage::to_json).collect();
                println!("{}", serde_json::Value::Array(values));
            } else if entries.is_empty() {
                eprintln!("lathe: no memories yet");
            } else {
                for entry in &entries {
                    println!(
                        "{}  [{}]  {}",
                        clean_line(&entry.id()),
                        entry.meta.kind.as_str(),
                        clean_line(&entry.meta.description)
                    );
                }
            }
            EXIT_OK
        }
        MemoryAction::Show { id } => match manage::find(&roots, id) {
            // The file as it is, minus what would drive the terminal (escape sequences, bidi
            // overrides); bytes that are not UTF-8 show as U+FFFD.
            Ok(entry) => match std::fs::read(&entry.path) {
                Ok(bytes) => {
                    print!("{}", clean_body(&String::from_utf8_lossy(&bytes)));
                    EXIT_OK
                }
                Err(error) => failed(&format!("{}: {error}", entry.path.display())),
            },
            Err(error) => failed(&error),
        },
        MemoryAction::Rm { id } => match manage::forget(&roots, id) {
            Ok(line) => {
                println!("{line}");
                EXIT_OK
            }
            Err(error) => failed(&error),
        },
        MemoryAction::Promote { id } => match manage::promote(&roots, id) {
            Ok(line) => {
                println!("{line}");
                EXIT_OK
            }
            Err(error) => failed(&error),
        },
        MemoryAction::Why => match manage::why(&home, &workspace) {
            Ok(recall) => {
                print!("{}", manage::explain(recall.as_ref()));
                EXIT_OK
            }
            Err(message) => failed(&message),
        },
        MemoryAction::Export { .. } => {
            let (entries, _) = manage::list(&roots);
            let values: Vec<_> = entries.iter().map(manage::to_json).collect();
            println!("{}", serde_json::Value::Array(values));
            EXIT_OK
        }
    }
}
