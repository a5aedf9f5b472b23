//! `lathe batch --executor ray` against a real local Ray head (PyPI `ray[default]` from the virtual
//! environment scripts/install-test-deps.sh makes), over the batch task set: 20 git repositories
//! with scripted mocks (15 solvable, 3 unsolvable, 2 hanging).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::batch_fixtures::{self, DEFAULT_FLAGS, Fixture, Kind};

/// The virtual environment with Ray: `.test-deps/ray-venv` of the repository, or
/// `$LATHE_TEST_DEPS/ray-venv`. Panics with the fix when it is missing.
fn ray_venv() -> PathBuf {
    let base = std::env::var_os("LATHE_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.test-deps"));
    let venv = base.join("ray-venv");
    assert!(
        venv.join("bin/ray").is_file(),
        "Ray is not installed at {}: run scripts/install-test-deps.sh",
        venv.display()
    );
    venv
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

/// A local Ray head (`ray start --head --block` in a process group of its own: dropping the
/// value kills the group, so the head is stopped on every exit path of a test), with the agents'
/// environment (HOME, LATHE_HOME) of the test.
struct Head {
    child: tokio::process::Child,
    group: Option<lathe_process::Group>,
    address: String,
    venv: PathBuf,
    log: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Head {
    fn start(home: &Path, lathe_home: &Path) -> Head {
        let venv = ray_venv();
        // Ray's sockets live under the temp dir: keep its path short.
        let tmp = tempfile::Builder::new().prefix("ray").tempdir_in("/tmp").expect("tempdir");
        let log = tmp.path().join("head.log");
        let log_file = std::fs::File::create(&log).expect("log");
        let dashboard = free_port();
        let path = format!("{}:{}", venv.join("bin").display(), std::env::var("PATH").unwrap_or_default());
        let mut command = tokio::process::Command::new(venv.join("bin/ray"));
        command
            .args(["start", "--head", "--block", "--num-cpus", "2", "--node-ip-address", "127.0.0.1"])
            .args(["--dashboard-host", "127.0.0.1", "--disable-usage-stats", "--temp-dir"])
            .arg(tmp.path())
            .args(["--port", &free_port().to_string(), "--dashboard-port", &dashboard.to_string()])
            .args(["--ray-client-server-port", &free_port().to_string()])
            .args(["--dashboard-agent-listen-port", &free_port().to_string()])
            .env("PATH", path)
            .env("HOME", home)
            .env("LATHE_HOME", lathe_home)
            .env_remove("RAY_ADDRESS")
            .env_remove("ANTHROPIC_API_KEY")
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().expect("log"))
            .stderr(log_file);
        lathe_process::new_group(&mut command);
        let child = {
            let _runtime = RUNTIME.enter();
            command.spawn().expect("ray start")
        };
        let group = child.id().and_then(lathe_process::Group::from_pid);
        let address = format!("http://127.0.0.1:{dashboard}");
        let mut head = Head { child, group, address, venv, log, _tmp: tmp };
        let deadline = Instant::now() + Duration::from_secs(180);
        while !dashboard_answers(dashboard) {
            if let Ok(Some(status)) = head.child.try_wait() {
                panic!("ray start --head exited {status} before its dashboard answered: {}", head.log_text());
            }
            assert!(
                Instant::now() < deadline,
                "the Ray dashboard did not answer within 180 s: {}",
                head.log_text()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        head
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn ray(&self, args: &[&str]) -> Output {
        let out = Command::new(self.venv.join("bin/ray"))
            .args(args)
            .args(["--address", &self.address])
            .stdin(Stdio::null())
            .output()
            .expect("ray");
        assert!(out.status.success(), "ray {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out
    }
}

impl Drop for Head {
    fn drop(&mut self) {
        if let Some(group) = self.group {
            group.signal(lathe_process::SIGKILL);
        }
        let _ = self.child.start_kill();
        let _ = RUNTIME.block_on(self.child.wait());
    }
}

/// Whether `GET /api/version` on the dashboard answers with a Ray version.
fn dashboard_answers(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = format!("GET /api/version HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.lines().next().is_some_and(|status| status.contains(" 200 ")) && answer.contains("ray_version")
}

/// The environment of `lathe batch` and the agents: a temp HOME and LATHE_HOME (no retries).
struct Homes {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    lathe_home: PathBuf,
}

fn homes() -> Homes {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().canonicalize().expect("canonical");
    let lathe_home = home.join("lathe-home");
    std::fs::create_dir_all(&lathe_home).expect("home");
    std::fs::write(lathe_home.join("config.toml"), "[retry]\nmax_retries = 0\n").expect("config");
    Homes { _tmp: tmp, home, lathe_home }
}

fn batch(homes: &Homes, head: Option<&Head>, tasks: &Path, out: &Path, executor: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lathe"));
    command.arg("batch").arg(tasks).args(executor).arg("--out").arg(out).args(DEFAULT_FLAGS);
    if let Some(head) = head {
        command.env("LATHE_RAY", head.venv.join("bin/ray"));
    }
    command
        .env("HOME", &homes.home)
        .env("LATHE_HOME", &homes.lathe_home)
        .env_remove("RAY_ADDRESS")
        .env_remove("RAY_API_SERVER_ADDRESS")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("LATHE_PROVIDER")
        .stdin(Stdio::null());
    command
}

fn rows(out: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("row ({e}): {l}"))).collect()
}

fn ids_with(rows: &[Value], status: &str) -> BTreeSet<String> {
    rows.iter().filter(|r| r["status"] == status).map(|r| r["id"].as_str().expect("id").to_string()).collect()
}

fn row_ids(rows: &[Value]) -> Vec<String> {
    rows.iter().map(|r| r["id"].as_str().expect("id").to_string()).collect()
}

/// Model requests each task's mock has received.
fn requests_per_task(fixture: &Fixture) -> BTreeMap<String, usize> {
    fixture.tasks.iter().map(|t| (t.id.clone(), t.server.requests().len())).collect()
}

fn run_to_end(command: Command) -> Output {
    let mut command = command;
    command.output().expect("lathe batch")
}

/// The acceptance run over Ray: 20 rows, exactly the 15 solvable ones resolved (each patch
/// re-checked here in a fresh clone), the 2 hangs `timeout`, usage equal to what the mocks served,
/// the job SUCCEEDED, every id in preds.json.
fn full_run(homes: &Homes, head: &Head) -> BTreeSet<String> {
    let fixture = futures_block(batch_fixtures::twenty_tasks());
    let out = fixture.tmp.path().join("out");
    let output = run_to_end(batch(
        homes,
        Some(head),
        &fixture.tasks_file,
        &out,
        &["--executor", "ray", "--address", &head.address],
    ));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "lathe batch --executor ray: {stderr}");
    let rows = rows(&out);
    let mut ids = row_ids(&rows);
    assert_eq!(ids.len(), 20, "{rows:#?}");
    ids.sort();
    ids.dedup();
    assert_eq!(ids.into_iter().collect::<BTreeSet<_>>(), fixture.all_ids());
    let resolved = ids_with(&rows, "resolved");
    assert_eq!(resolved, fixture.ids(Kind::Solvable), "{rows:#?}");
    assert_eq!(ids_with(&rows, "timeout"), fixture.ids(Kind::Hanging), "{rows:#?}");
    for task in fixture.tasks.iter().filter(|t| resolved.contains(&t.id)) {
        let patch =
            std::fs::read_to_string(out.join("tasks").join(&task.id).join("patch.diff")).expect("patch");
        assert!(batch_fixtures::patch_passes(&task.repo, &task.base_sha, &patch), "{}: {patch}", task.id);
    }
    let served = fixture.served_usage();
    let sum = |field: &str| rows.iter().map(|r| r[field].as_u64().unwrap_or(0)).sum::<u64>();
    assert_eq!(
        (sum("input_tokens"), sum("cached_tokens"), sum("output_tokens")),
        (served.input, served.cached, served.output)
    );
    let cost: f64 = rows.iter().map(|r| r["cost_usd"].as_f64().unwrap_or(0.0)).sum();
    assert!((cost - served.cost_usd).abs() < 1e-9, "cost {cost} vs served {}", served.cost_usd);
    assert!(rows.iter().all(|r| r["attempt"] == 1 && r["node"].as_str().is_some_and(|n| !n.is_empty())));

    let jobs = String::from_utf8_lossy(&head.ray(&["job", "list"]).stdout).into_owned();
    let ours: Vec<&str> =
        jobs.split("JobDetails(").filter(|j| j.contains("submission_id='lathe-batch-")).collect();
    assert_eq!(ours.len(), 1, "{jobs}");
    assert!(ours[0].contains("status=<JobStatus.SUCCEEDED"), "{jobs}");

    let preds: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("preds.json")).expect("preds")).expect("json");
    let pred_ids: BTreeSet<String> = match &preds {
        Value::Array(items) => {
            items.iter().filter_map(|p| p["instance_id"].as_str().map(str::to_string)).collect()
        }
        Value::Object(map) => map.keys().cloned().collect(),
        other => panic!("preds.json: {other}"),
    };
    assert_eq!(pred_ids, fixture.all_ids());
    resolved
}

/// Runs a future on a fresh runtime (the fixtures start their mocks on it and keep serving).
fn futures_block<F: std::future::Future>(future: F) -> F::Output {
    RUNTIME.block_on(future)
}

static RUNTIME: std::sync::LazyLock<tokio::runtime::Runtime> =
    std::sync::LazyLock::new(|| tokio::runtime::Runtime::new().expect("runtime"));

/// `ray job stop` in the middle of a batch, then a rerun: the stopped run kept its rows and
/// failed clearly; the rerun ran only the ids without a row (the others' mocks got no request)
/// and no id has two rows.
fn stopped_and_resumed(homes: &Homes, head: &Head) {
    let fixture = futures_block(batch_fixtures::twenty_tasks());
    let out = fixture.tmp.path().join("out");
    let executor = ["--executor", "ray", "--address", head.address.as_str()];
    let mut child = batch(homes, Some(head), &fixture.tasks_file, &out, &executor)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lathe batch");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut first = String::new();
    let mut job = None;
    while job.is_none() {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).expect("stderr") > 0, "no Ray job announced: {first}");
        job = line.split_whitespace().find(|w| w.starts_with("lathe-batch-")).map(str::to_string);
        first.push_str(&line);
    }
    let job = job.expect("job");
    let deadline = Instant::now() + Duration::from_secs(300);
    while rows(&out).len() < 2 {
        assert!(Instant::now() < deadline, "no 2 rows within 300 s");
        assert!(child.try_wait().expect("wait").is_none(), "lathe batch ended before 2 rows");
        std::thread::sleep(Duration::from_millis(100));
    }
    head.ray(&["job", "stop", &job]);
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).expect("stderr");
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(1), "stopped batch: {first}{rest}");
    assert!(rest.contains("STOPPED"), "{rest}");
    let kept = rows(&out);
    assert!(kept.len() >= 2 && kept.len() < 20, "{} rows after the stop", kept.len());
    let done: BTreeSet<String> = row_ids(&kept).into_iter().collect();
    assert_eq!(done.len(), kept.len(), "a duplicate row: {kept:#?}");
    let before = requests_per_task(&fixture);

    let output = run_to_end(batch(homes, Some(head), &fixture.tasks_file, &out, &executor));
    assert_eq!(output.status.code(), Some(0), "rerun: {}", String::from_utf8_lossy(&output.stderr));
    let all = rows(&out);
    let ids = row_ids(&all);
    assert_eq!(ids.iter().collect::<BTreeSet<_>>().len(), ids.len(), "a duplicate row: {all:#?}");
    assert_eq!(ids.into_iter().collect::<BTreeSet<_>>(), fixture.all_ids());
    let after = requests_per_task(&fixture);
    for id in fixture.all_ids() {
        if done.contains(&id) {
            assert_eq!(after[&id], before[&id], "{id} had a row and ran again");
        } else {
            assert!(after[&id] > before[&id], "{id} had no row and did not run");
        }
    }
}

/// SIGTERM to `lathe batch` in the middle of a Ray batch: it stops its job (`ray job list` shows
/// it STOPPED), keeps the rows that finished, and ends with exit 1.
fn interrupted_batch_stops_its_job(homes: &Homes, head: &Head) {
    let fixture = futures_block(batch_fixtures::twenty_tasks());
    let out = fixture.tmp.path().join("out");
    let mut child = batch(
        homes,
        Some(head),
        &fixture.tasks_file,
        &out,
        &["--executor", "ray", "--address", &head.address],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("lathe batch");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut first = String::new();
    let mut job = None;
    while job.is_none() {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).expect("stderr") > 0, "no Ray job announced: {first}");
        job = line.split_whitespace().find(|w| w.starts_with("lathe-batch-")).map(str::to_string);
        first.push_str(&line);
    }
    let job = job.expect("job");
    let deadline = Instant::now() + Duration::from_secs(300);
    while rows(&out).is_empty() {
        assert!(Instant::now() < deadline, "no row within 300 s");
        assert!(child.try_wait().expect("wait").is_none(), "lathe batch ended before a row");
        std::thread::sleep(Duration::from_millis(100));
    }
    let term = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill");
    assert!(term.success());
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).expect("stderr");
    assert_eq!(child.wait().expect("wait").code(), Some(1), "{first}{rest}");
    assert!(rest.contains(&format!("stopping the Ray job {job}")), "{rest}");
    assert!(rest.contains("STOPPED"), "{rest}");
    let jobs = String::from_utf8_lossy(&head.ray(&["job", "list"]).stdout).into_owned();
    let ours =
        jobs.split("JobDetails(").find(|j| j.contains(&format!("submission_id='{job}'"))).expect("job");
    assert!(ours.contains("status=<JobStatus.STOPPED"), "{ours}");
    let kept = rows(&out);
    assert!(!kept.is_empty() && kept.len() < 20, "{} rows", kept.len());
    assert_eq!(row_ids(&kept).into_iter().collect::<BTreeSet<_>>().len(), kept.len(), "{kept:#?}");
}

/// A head that answers but no `ray` command to submit with: a clear message, exit 2, nothing run.
fn no_ray_command_is_refused_before_anything_runs(homes: &Homes, head: &Head) {
    let fixture = futures_block(batch_fixtures::twenty_tasks());
    let out = fixture.tmp.path().join("out");
    let missing = fixture.tmp.path().join("no-such-ray");
    let output = run_to_end({
        let mut command = batch(
            homes,
            Some(head),
            &fixture.tasks_file,
            &out,
            &["--executor", "ray", "--address", &head.address],
        );
        command.env("LATHE_RAY", &missing);
        command
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "cannot find the `ray` command (LATHE_RAY={} is not a file)",
            missing.display()
        )),
        "{stderr}"
    );
    assert!(rows(&out).is_empty());
    assert_eq!(fixture.requests(), 0);
}

/// The pid of the process whose command line holds every one of `parts`, if one runs now.
fn pid_with(parts: &[&str]) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|entry| {
        let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        parts.iter().all(|part| cmdline.contains(part)).then_some(pid)
    })
}

fn parent_of(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    // Field 4 after the parenthesised command name.
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    after.split_whitespace().nth(1).expect("ppid").parse().expect("ppid")
}

/// The Ray worker running a task is killed (SIGKILL) while the task's agent hangs: Ray runs the
/// task again (attempt 2) and the batch gets exactly one row for it; the job still SUCCEEDED.
fn worker_death_is_retried(homes: &Homes, head: &Head) {
    let specs = vec![("w1".to_string(), Kind::Hanging), ("w2".to_string(), Kind::Solvable)];
    let fixture = futures_block(batch_fixtures::tasks(specs));
    let out = fixture.tmp.path().join("out");
    let out_text = out.display().to_string();
    let mut child = batch(
        homes,
        Some(head),
        &fixture.tasks_file,
        &out,
        &["--executor", "ray", "--address", &head.address],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("lathe batch");
    let deadline = Instant::now() + Duration::from_secs(300);
    let task = loop {
        // The hanging task's agent has started once its mock served the first turn.
        if fixture.tasks[0].server.requests().len() == 1
            && let Some(pid) = pid_with(&["batch-task", "\"w1\"", &out_text])
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "task w1 did not start within 300 s");
        assert!(child.try_wait().expect("wait").is_none(), "lathe batch ended before w1 ran");
        std::thread::sleep(Duration::from_millis(20));
    };
    let worker = parent_of(task);
    let comm = std::fs::read_to_string(format!("/proc/{worker}/cmdline")).unwrap_or_default();
    assert!(comm.starts_with("ray::"), "the parent of batch-task is not a Ray worker: {comm:?}");
    let killed = Command::new("kill").args(["-KILL", &worker.to_string()]).status().expect("kill");
    assert!(killed.success());
    let mut stderr = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut stderr).expect("stderr");
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0), "{stderr}");
    let rows = rows(&out);
    assert_eq!(row_ids(&rows).into_iter().collect::<BTreeSet<_>>().len(), 2, "{rows:#?}");
    assert_eq!(rows.len(), 2, "{rows:#?}");
    let w1 = rows.iter().find(|r| r["id"] == "w1").expect("w1");
    assert_eq!(w1["attempt"], 2, "{w1}");
    let w2 = rows.iter().find(|r| r["id"] == "w2").expect("w2");
    assert_eq!(w2["status"], "resolved", "{w2}");
}

#[test]
fn ray_runs_the_batch_retries_a_dead_worker_resumes_a_stopped_job_and_resolves_what_the_local_pool_does() {
    let homes = homes();
    let head = Head::start(&homes.home, &homes.lathe_home);
    no_ray_command_is_refused_before_anything_runs(&homes, &head);
    let resolved_on_ray = full_run(&homes, &head);
    stopped_and_resumed(&homes, &head);
    worker_death_is_retried(&homes, &head);
    interrupted_batch_stops_its_job(&homes, &head);
    drop(head);

    let fixture = futures_block(batch_fixtures::twenty_tasks());
    let out = fixture.tmp.path().join("out");
    let output = run_to_end(batch(
        &homes,
        None,
        &fixture.tasks_file,
        &out,
        &["--executor", "local", "--workers", "2"],
    ));
    assert_eq!(output.status.code(), Some(0), "local: {}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(ids_with(&rows(&out), "resolved"), resolved_on_ray);
}

#[test]
fn a_ray_address_that_does_not_answer_is_refused_before_anything_runs() {
    let homes = homes();
    let fixture = futures_block(batch_fixtures::twenty_tasks());
    let out = fixture.tmp.path().join("out");
    // A port nothing listens on (bound, then released).
    let address = format!("http://127.0.0.1:{}", free_port());
    let output = run_to_end(batch(
        &homes,
        None,
        &fixture.tasks_file,
        &out,
        &["--executor", "ray", "--address", &address],
    ));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("no Ray dashboard answers at {address}")), "{stderr}");
    assert!(rows(&out).is_empty());
    assert_eq!(fixture.requests(), 0);
}
