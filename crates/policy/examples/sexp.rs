fn main() {
    let ws = std::path::PathBuf::from("/tmp/ws-demo");
    std::fs::create_dir_all(&ws).unwrap();
    let files = lathe_policy::settings::settings_files(None, &ws.join("nohome"), &ws);
    let loaded = lathe_policy::settings::load(&files, Some(std::path::Path::new("/root")));
    let mode = std::env::args().nth(1).unwrap_or("default".into()).parse().unwrap();
    let policy = lathe_policy::Policy::new(lathe_policy::PolicyConfig {
        mode,
        workspace: ws.clone(),
        home: Some("/root".into()),
        settings: loaded,
        ..Default::default()
    });
    for line in std::io::stdin().lines() {
        let line = line.unwrap().replace("\\n", "\n");
        let d =
            policy.decide("shell", &lathe_policy::Access::Execute { command: line.clone(), cwd: ws.clone() });
        println!("{:?} {line:?}\n    by={} reason={} sugg={:?}", d.verdict, d.by, d.reason, d.suggestions);
    }
}
