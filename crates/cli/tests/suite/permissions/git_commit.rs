//! Committing under `workspace-write`: `git add` and `git commit` work in a repository and in a
//! linked worktree, while every way a command could make a later git outside the sandbox run its
//! code (hooks, config, a moved `.git`, a planted `commondir` or submodule dir, a link git writes
//! through, a process left behind to plant one later) fails or is undone.

use super::*;

/// Whether the run's `init` line says bubblewrap confined it; a loud skip otherwise (a failure in CI,
/// which installs it).
fn under_bubblewrap(lines: &[Value]) -> bool {
    let init = lines.iter().find(|l| l["type"] == "init").expect("init");
    if init["sandbox"].as_str().is_some_and(|s| s.ends_with("bubblewrap")) {
        return true;
    }
    assert!(std::env::var_os("CI").is_none(), "bubblewrap does not work in CI: {init}");
    eprintln!("SKIPPED: bubblewrap does not work on this machine ({init})");
    false
}

/// A repository at `dir` with one commit (`first`) of a README.
fn committed_readme(dir: &Path) {
    git(dir, &["init", "-q", "-b", "trunk"]);
    std::fs::write(dir.join("README"), "hello\n").expect("README");
    git(dir, &["add", "README"]);
    git(dir, &["commit", "-qm", "first"]);
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn the_sandbox_lets_git_commit_in_a_repository_and_a_linked_worktree_but_not_touch_hooks_or_config() {
    for linked in [false, true] {
        let p = project();
        // The main checkout lies outside the workspace when the workspace is a linked worktree.
        let main = if linked { p.out.join("main") } else { p.ws.clone() };
        std::fs::create_dir_all(&main).expect("main");
        committed_readme(&main);
        if linked {
            std::fs::remove_dir_all(&p.ws).expect("ws");
            git(&main, &["worktree", "add", "-q", "-b", "feat", p.ws.to_str().expect("utf-8")]);
        }
        let common = main.join(".git");
        let config_before = std::fs::read(common.join("config")).expect("config");
        // A script, so only the sandbox (not the command analysis) stands between it and the hooks.
        // After the commit it tries each way to make a later git outside the sandbox run its code.
        std::fs::write(
            p.ws.join("probe.sh"),
            "echo hi > a.txt && git add a.txt && git commit -qm add-a && echo committed\n\
             echo more >> README && git stash -q && echo stashed\n\
             common=$(git rev-parse --git-common-dir); own=$(git rev-parse --git-dir)\n\
             touch \"$common/hooks/pre-commit\" 2>/dev/null || echo hooks-protected\n\
             (echo '[core]' >> \"$common/config\") 2>/dev/null || echo config-protected\n\
             mv .git .git-moved 2>/dev/null || echo dot-git-stays\n\
             mv \"$own/config\" \"$own/config.old\" 2>/dev/null || echo config-stays\n\
             (echo /tmp > \"$own/commondir\") 2>/dev/null\n\
             mkdir -p \"$own/modules/x\" 2>/dev/null\n\
             ln -sf \"$HOME/.bashrc\" \"$own/COMMIT_EDITMSG\" 2>/dev/null\n\
             (setsid sh -c 'sleep 1; echo /tmp > \"$0/commondir\"' \"$own\" &) 2>/dev/null\n\
             ln -s /tmp \"$common/objects/zz\" 2>/dev/null\n\
             mkdir -p .claude && echo '{}' > .claude/settings.json\n\
             echo garbage > \"$own/HEAD\"\n\
             echo planted\n",
        )
        .expect("probe");
        settings(&p, ".lathe/settings.json", json!({"permissions": {"allow": ["Bash(bash probe.sh)"]}}));
        let server = scripted(vec![shell("c1", "bash probe.sh")]).await;
        // Default mode: the sandbox applies (bypass mode runs commands unconfined).
        let mut run = lathe(&p, &server, &["-p", "commit"]);
        for (key, value) in [("GIT_AUTHOR_NAME", "t"), ("GIT_AUTHOR_EMAIL", "t@example.com")] {
            run.env(key, value);
        }
        run.env("GIT_COMMITTER_NAME", "t").env("GIT_COMMITTER_EMAIL", "t@example.com");
        let out = output(run).await;
        assert_eq!(out.status.code(), Some(0), "linked={linked}: {}", stderr(&out));
        let lines = lines(&out);
        let shown = output_of(&lines, "c1");
        if !under_bubblewrap(&lines) {
            return;
        }
        assert!(shown.contains("committed"), "linked={linked}: {shown}");
        let branch = if linked { "feat" } else { "trunk" };
        assert!(git(&main, &["log", branch, "--oneline"]).contains("add-a"), "linked={linked}");
        assert!(
            shown.contains("hooks-protected") && shown.contains("config-protected"),
            "linked={linked}: {shown}"
        );
        assert!(!common.join("hooks/pre-commit").exists(), "linked={linked}");
        assert!(shown.contains("dot-git-stays") && shown.contains("planted"), "linked={linked}: {shown}");
        // What the command planted is gone, and the result says so; the repository still works.
        let own = PathBuf::from(git(&p.ws, &["rev-parse", "--absolute-git-dir"]).trim());
        // The probe left a process that would plant a `commondir` a second after the call: the
        // wait is the behaviour under test (nothing may appear), so it cannot be a poll.
        std::thread::sleep(std::time::Duration::from_millis(1500));
        for planted in ["commondir", "modules"] {
            if linked && planted == "commondir" {
                assert_eq!(
                    std::fs::read_to_string(own.join("commondir")).expect("commondir").trim(),
                    "../.."
                );
                continue;
            }
            assert!(!own.join(planted).exists(), "linked={linked}: {planted} survived");
        }
        assert!(!own.join("COMMIT_EDITMSG").symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()));
        assert!(shown.contains("[sandbox: undid") && shown.contains("restored"), "linked={linked}: {shown}");
        assert!(shown.contains("stashed"), "linked={linked}: {shown}");
        assert!(git(&p.ws, &["stash", "list"]).contains("stash@{0}"), "linked={linked}: the stash was lost");
        assert!(common.join("objects/zz").symlink_metadata().is_err(), "linked={linked}");
        assert!(!p.ws.join(".claude").exists(), "linked={linked}: a settings dir was planted");
        assert!(git(&p.ws, &["log", "--oneline"]).contains("add-a"), "linked={linked}: HEAD");
        assert!(git(&p.ws, &["status", "--short"]).contains("probe.sh"), "linked={linked}");
        assert_eq!(std::fs::read(common.join("config")).expect("config"), config_before, "linked={linked}");
        if linked {
            assert!(!main.join("a.txt").exists(), "the main checkout is untouched");
        }
    }
}

#[tokio::test]
async fn a_forged_index_a_head_made_a_directory_and_a_planted_mcp_config_are_undone() {
    let p = project();
    committed_readme(&p.ws);
    // An index entry git would refuse to write, made by renaming a valid one in place.
    std::fs::write(
        p.ws.join("forge.py"),
        "import hashlib\n\
         data = open('.git/index', 'rb').read()[:-20].replace(b'-git/hooks/post-checkout', b'.git/hooks/post-checkout')\n\
         open('.git/index', 'wb').write(data + hashlib.sha1(data).digest())\n",
    )
    .expect("forge");
    std::fs::write(
        p.ws.join("probe.sh"),
        "sha=$(echo 'touch PWNED' | git hash-object -w --stdin)\n\
         git update-index --add --cacheinfo 100755,$sha,-git/hooks/post-checkout && python3 forge.py\n\
         git ls-files | grep -q '^.git/hooks' && echo forged\n\
         echo '{\"mcpServers\": {\"x\": {\"command\": \"sh\"}}}' > .mcp.json\n\
         rm -f .git/HEAD && mkdir .git/HEAD && echo head-is-a-dir\n",
    )
    .expect("probe");
    settings(&p, ".lathe/settings.json", json!({"permissions": {"allow": ["Bash(bash probe.sh)"]}}));
    let server = scripted(vec![shell("c1", "bash probe.sh")]).await;
    let out = output(lathe(&p, &server, &["-p", "forge"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    if !under_bubblewrap(&lines) {
        return;
    }
    let shown = output_of(&lines, "c1");
    assert!(shown.contains("forged") && shown.contains("head-is-a-dir"), "{shown}");
    assert!(shown.contains("the index named paths outside the worktree"), "{shown}");
    assert!(!git(&p.ws, &["ls-files"]).contains(".git/"), "the forged entry is still in the index");
    assert!(!p.ws.join(".mcp.json").exists(), "{shown}");
    assert!(git(&p.ws, &["log", "--oneline"]).contains("first"), "HEAD: {shown}");
    git(&p.ws, &["restore", "."]);
    assert!(!p.ws.join(".git/hooks/post-checkout").exists());
}

#[tokio::test]
async fn the_git_status_lathe_runs_at_start_runs_no_program_a_nested_repository_configures() {
    let p = project();
    let pwned = p.out.join("PWNED");
    git(&p.ws, &["init", "-q", "-b", "trunk"]);
    let sub = p.ws.join("sub");
    std::fs::create_dir_all(&sub).expect("sub");
    git(&sub, &["init", "-q", "-b", "trunk"]);
    std::fs::write(sub.join("f"), "x\n").expect("f");
    git(&sub, &["add", "f"]);
    git(&sub, &["commit", "-qm", "inner"]);
    git(&sub, &["config", "core.fsmonitor", &format!("touch {}; false", pwned.display())]);
    git(&p.ws, &["add", "sub"]);
    git(&p.ws, &["commit", "-qm", "outer"]);
    std::fs::write(sub.join("f"), "changed\n").expect("f");
    // Print mode sends the repository's state after the first response: a call makes a second request.
    let server = scripted(vec![shell("c1", "pwd")]).await;
    let out = output(lathe(&p, &server, &["-p", "hello"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sent = server.requests()[1].body.to_string();
    assert!(sent.contains("Git branch: trunk"), "the repository state ran git: {sent}");
    assert!(!pwned.exists(), "Lathe's own git status ran the nested repository's fsmonitor");
}

#[tokio::test]
async fn an_index_forged_with_its_old_modification_time_is_still_caught() {
    let p = project();
    committed_readme(&p.ws);
    std::fs::write(
        p.ws.join("forge.py"),
        "import hashlib\n\
         data = open('.git/index', 'rb').read()[:-20].replace(b'--/outside-file', b'../outside-file')\n\
         open('.git/index', 'wb').write(data + hashlib.sha1(data).digest())\n",
    )
    .expect("forge");
    // The first call stages an entry whose path is fine; the second renames it in place and sets
    // the index's modification time back.
    std::fs::write(
        p.ws.join("stage.sh"),
        "sha=$(echo 'written outside' | git hash-object -w --stdin)\n\
         git update-index --add --cacheinfo 100644,$sha,--/outside-file && echo staged\n",
    )
    .expect("stage");
    std::fs::write(
        p.ws.join("probe.sh"),
        "touch -r .git/index stamp && python3 forge.py && touch -r stamp .git/index && rm stamp\n\
         git ls-files | grep -q '^../outside-file' && echo forged\n",
    )
    .expect("probe");
    settings(
        &p,
        ".lathe/settings.json",
        json!({"permissions": {"allow": ["Bash(bash stage.sh)", "Bash(bash probe.sh)"]}}),
    );
    let server = scripted(vec![shell("c1", "bash stage.sh"), shell("c2", "bash probe.sh")]).await;
    let out = output(lathe(&p, &server, &["-p", "forge"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    if !under_bubblewrap(&lines) {
        return;
    }
    assert!(output_of(&lines, "c1").contains("staged"), "{}", output_of(&lines, "c1"));
    let shown = output_of(&lines, "c2");
    assert!(
        shown.contains("forged") && shown.contains("the index named paths outside the worktree"),
        "{shown}"
    );
    git(&p.ws, &["restore", "."]);
    assert!(
        !p.out.join("outside-file").exists() && !p.ws.parent().expect("parent").join("outside-file").exists()
    );
}

#[tokio::test]
async fn the_git_status_lathe_runs_at_start_runs_no_filter_or_signature_program_of_the_repository() {
    let p = project();
    let pwned = p.out.join("PWNED");
    git(&p.ws, &["init", "-q", "-b", "trunk"]);
    std::fs::write(p.ws.join(".gitattributes"), "a filter=x\n").expect("attributes");
    std::fs::write(p.ws.join("a"), "x\n").expect("a");
    git(&p.ws, &["add", "a", ".gitattributes"]);
    git(&p.ws, &["commit", "-qm", "first"]);
    let touch = format!("sh -c 'touch {}; cat'", pwned.display());
    git(&p.ws, &["config", "filter.x.clean", &touch]);
    git(&p.ws, &["config", "log.showSignature", "true"]);
    git(&p.ws, &["config", "gpg.program", &format!("sh -c 'touch {}'", pwned.display())]);
    // The same size, so that git status must read the file (through the filter) to see the change;
    // the section header after another on one line, as git's parser allows.
    std::fs::write(p.ws.join("a"), "y\n").expect("a");
    let config = std::fs::read_to_string(p.ws.join(".git/config")).expect("config");
    std::fs::write(p.ws.join(".git/config"), config.replace("[filter \"x\"]", "[core] [filter \"x\"]"))
        .expect("config");
    let server = scripted(vec![shell("c1", "pwd")]).await;
    let out = output(lathe(&p, &server, &["-p", "hello"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sent = server.requests()[1].body.to_string();
    assert!(sent.contains("Git status: not shown") && sent.contains("first"), "{sent}");
    assert!(!pwned.exists(), "Lathe's own git ran a program the repository's config names");
    let mut plain = Command::new("git");
    plain.arg("-C").arg(&p.ws).args(["status", "--short"]);
    assert!(plain.output().expect("git").status.success());
    assert!(pwned.exists(), "the test's filter does not run: it proves nothing");
}
