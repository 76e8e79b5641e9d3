//! The service on 127.0.0.1 with an ephemeral port: renders, lists,
//! errors with their statuses, the token, metrics; a broken edit keeps
//! the last good version served, a fix serves the new one; renders go on
//! while the library reloads; shutdown answers what is in flight.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use teleprompt_serve::{Config, Server};

fn dir(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("writable");
    for (path, text) in files {
        std::fs::write(dir.join(path), text).expect("writable");
    }
    dir
}

/// A running server and the way to stop it.
struct Running {
    address: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Running {
    fn start(config: Config) -> Running {
        let (address_tx, address_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?;
            runtime.block_on(async move {
                let server = Server::bind(config).await?;
                let _ = address_tx.send(server.local_addr());
                server
                    .run(async move {
                        let _ = stop_rx.await;
                    })
                    .await
            })
        });
        let address = address_rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the server binds");
        Running {
            address,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    fn stop(mut self) -> std::io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.thread
            .take()
            .expect("running")
            .join()
            .expect("the server thread does not panic")
    }

    /// One HTTP/1.1 request on a fresh connection: the status and body.
    fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> (u16, String) {
        let mut stream = TcpStream::connect(self.address).expect("connects");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("a timeout");
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).expect("writes");
        // A server may answer (413) before it reads a large body.
        let _ = stream.write_all(body);
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        let response = String::from_utf8(response).expect("UTF-8");
        let (head, body) = response.split_once("\r\n\r\n").expect("a head");
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .expect("a status line");
        let body = if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            unchunk(body)
        } else {
            body.to_string()
        };
        (status, body)
    }

    fn get(&self, path: &str) -> (u16, Value) {
        let (status, body) = self.request("GET", path, &[], b"");
        (
            status,
            serde_json::from_str(&body).unwrap_or(Value::String(body)),
        )
    }

    fn render(&self, name: &str, request: &Value) -> (u16, Value) {
        let body = serde_json::to_vec(request).expect("JSON");
        let (status, body) =
            self.request("POST", &format!("/v1/prompts/{name}/render"), &[], &body);
        (
            status,
            serde_json::from_str(&body).unwrap_or_else(|_| panic!("not JSON: {body}")),
        )
    }

    /// Polls `GET /v1/prompts` until `ready` holds of the entry named
    /// `name` (10 s at most).
    fn wait_for(&self, name: &str, ready: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (_, list) = self.get("/v1/prompts");
            let entry = list["prompts"]
                .as_array()
                .and_then(|prompts| prompts.iter().find(|p| p["name"] == name))
                .cloned()
                .unwrap_or(Value::Null);
            if ready(&entry) {
                return entry;
            }
            assert!(Instant::now() < deadline, "timed out waiting: {list}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
    out
}

/// Writes a file whole, as an editor saves it (a temporary file renamed):
/// a write in place is first an empty file, which a reload could serve.
fn save(path: PathBuf, text: &str) {
    let temporary = path.with_extension("partial");
    std::fs::write(&temporary, text).expect("writable");
    std::fs::rename(&temporary, path).expect("renamable");
}

fn config(dir: &Path) -> Config {
    Config {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        watch: Some(Duration::from_millis(30)),
        ..Config::new(dir)
    }
}

const TASK: &str = "---
description: Fix one issue
input:
  schema:
    issue:
      title: string
---
Fix {{ issue.title }}.";

#[test]
fn renders_lists_and_answers_errors_with_their_status() {
    let root = dir(
        "serve-basic",
        &[
            ("task.j2", TASK),
            (
                "chat.hbs",
                "{{role \"system\"}}You help {{user}}.{{role \"user\"}}{{question}}",
            ),
            ("broken.j2", "{% if %}"),
        ],
    );
    let server = Running::start(config(&root));

    let (status, health) = server.get("/healthz");
    assert_eq!(status, 200);
    assert_eq!(
        health,
        json!({"status": "ok", "prompts": 2, "files_with_errors": 1})
    );

    let (status, list) = server.get("/v1/prompts");
    assert_eq!(status, 200);
    let task = &list["prompts"][1];
    assert_eq!(task["name"], "task");
    assert_eq!(task["syntax"], "jinja");
    assert_eq!(task["description"], "Fix one issue");
    assert_eq!(task["version"].as_str().map(str::len), Some(16));
    assert_eq!(task["inputs"]["properties"]["issue"]["type"], "object");
    assert_eq!(task["error"], Value::Null);
    // A file that never loaded is listed with its error.
    assert_eq!(list["errors"][0]["error"]["class"], "parse");
    assert!(list["errors"][0]["file"]
        .as_str()
        .is_some_and(|file| file.ends_with("broken.j2")));

    let (status, one) = server.get("/v1/prompts/task");
    assert_eq!(status, 200);
    assert_eq!(one["metadata"]["description"], "Fix one issue");

    let (status, rendered) =
        server.render("task", &json!({"data": {"issue": {"title": "the login"}}}));
    assert_eq!(status, 200, "{rendered}");
    assert_eq!(rendered["output"], "Fix the login.");
    assert_eq!(rendered["format"], "text");
    assert_eq!(rendered["version"], task["version"]);

    let (status, rendered) = server.render(
        "chat",
        &json!({"data": {"user": "Ann", "question": "Why?"}, "format": "openai"}),
    );
    assert_eq!(status, 200, "{rendered}");
    assert_eq!(
        rendered["output"],
        json!({"messages": [
            {"role": "system", "content": "You help Ann."},
            {"role": "user", "content": "Why?"}
        ]})
    );

    // 422: the data does not fit; the error as `check --format json` has it.
    let (status, error) = server.render("task", &json!({"data": {"issue": {"titel": "x"}}}));
    assert_eq!(status, 422, "{error}");
    let error = &error["error"];
    assert_eq!(error["class"], "input");
    assert!(
        error["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("task.j2")),
        "{error}"
    );
    let (status, error) = server.render("chat", &json!({"data": {"usr": "Ann", "question": "?"}}));
    assert_eq!(status, 422, "{error}");
    assert_eq!(error["error"]["class"], "render");
    assert_eq!(error["error"]["line"], 1);
    assert_eq!(error["error"]["column"], 29);
    // The missing data's path, for a client to read without the message.
    assert_eq!(error["error"]["path"], "user", "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("user")),
        "{error}"
    );

    // 404 with the closest name; 400 for a malformed request or format.
    let (status, error) = server.render("tsk", &json!({}));
    assert_eq!(status, 404);
    assert_eq!(error["error"]["help"], "did you mean \"task\"?");
    let (status, body) = server.request("POST", "/v1/prompts/task/render", &[], b"{\"data\": ");
    assert_eq!(status, 400, "{body}");
    let (status, error) = server.render("task", &json!({"dat": {}}));
    assert_eq!(status, 400);
    assert!(error["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("unknown field `dat`")));
    // A key twice is refused, as in every data file.
    let (status, body) = server.request(
        "POST",
        "/v1/prompts/task/render",
        &[],
        br#"{"data": {"issue": {"title": "a", "title": "b"}}}"#,
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("title"), "{body}");
    // 100,000 nested lists: refused as data files are, the server stays up.
    let deep = format!(
        "{{\"data\": {{\"x\": {}{}}}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let (status, body) = server.request("POST", "/v1/prompts/task/render", &[], deep.as_bytes());
    assert_eq!(status, 400, "{body}");
    let (status, body) = server.request("POST", "/v1/prompts/task/render", &[], b"\xff\xfe{}");
    assert_eq!(status, 400, "{body}");
    let (status, _) = server.render("task", &json!({"format": "xml"}));
    assert_eq!(status, 400);
    let (status, _) = server.render("task", &json!({"data": [1]}));
    assert_eq!(status, 400);
    let (status, _) = server.render("task", &json!({"now": "yesterday"}));
    assert_eq!(status, 400);
    let (status, _) = server.get("/v2/nothing");
    assert_eq!(status, 404);

    // 413: larger than the request bound (4 MiB by default).
    let big = format!("{{\"data\": {{\"x\": \"{}\"}}}}", "a".repeat(5 << 20));
    let (status, body) = server.request("POST", "/v1/prompts/task/render", &[], big.as_bytes());
    assert_eq!(status, 413, "{body}");

    // Names the library does not know never get a series of their own,
    // whatever is wrong with the request (here, its data as well).
    for name in ["no-such-prompt-1", "no-such-prompt-2"] {
        let (status, _) = server.render(name, &json!({"data": [1]}));
        assert!(status == 400 || status == 404, "{status}");
    }

    let (status, metrics) = server.request("GET", "/metrics", &[], b"");
    assert_eq!(status, 200);
    assert!(
        metrics.contains("teleprompt_renders_total{prompt=\"task\",outcome=\"ok\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("teleprompt_renders_total{prompt=\"(unknown)\",outcome=\"error\"} 3"),
        "{metrics}"
    );
    assert!(!metrics.contains("no-such-prompt"), "{metrics}");
    assert!(
        metrics.contains("teleprompt_render_errors_total{class=\"render\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("teleprompt_render_duration_seconds_count "),
        "{metrics}"
    );
    assert!(
        metrics.contains("teleprompt_prompt_files_with_errors 1"),
        "{metrics}"
    );

    server.stop().expect("stops cleanly");
}

#[test]
fn renders_tokens_by_the_prompt_s_tokenizer() {
    let root = dir(
        "serve-tokens",
        &[
            (
                "hello.j2",
                "---\ntokenizer: o200k_base\n---\nHello, {{ who }}!",
            ),
            ("plain.j2", "Hello, {{ who }}!"),
        ],
    );
    let server = Running::start(config(&root));
    let (status, rendered) = server.render(
        "hello",
        &json!({"data": {"who": "world"}, "format": "tokens"}),
    );
    assert_eq!(status, 200, "{rendered}");
    assert_eq!(
        rendered["output"],
        json!({"tokenizer": "o200k_base", "total": 4, "messages": [
            {"role": "user", "count": 4, "ids": [13225, 11, 2375, 0]}
        ]})
    );
    // No tokenizer: the host's input error.
    let (status, error) = server.render(
        "plain",
        &json!({"data": {"who": "world"}, "format": "tokens"}),
    );
    assert_eq!(status, 422, "{error}");
    assert_eq!(error["error"]["class"], "input");
}

#[test]
fn a_broken_edit_keeps_the_last_good_version_and_a_fix_replaces_it() {
    let root = dir("serve-reload", &[("task.j2", "v1 {{ n }}")]);
    let server = Running::start(config(&root));
    let first = server.wait_for("task", |entry| entry["version"].is_string());
    let (_, rendered) = server.render("task", &json!({"data": {"n": 1}}));
    assert_eq!(rendered["output"], "v1 1");

    // Broken: the watcher reloads, the error is listed, v1 is served.
    save(root.join("task.j2"), "v2 {{ n | nope }}");
    let entry = server.wait_for("task", |entry| entry["error"].is_object());
    assert_eq!(entry["version"], first["version"]);
    assert_eq!(entry["error"]["class"], "parse");
    assert!(
        entry["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("nope")),
        "{entry}"
    );
    let (status, rendered) = server.render("task", &json!({"data": {"n": 1}}));
    assert_eq!((status, &rendered["output"]), (200, &json!("v1 1")));
    assert_eq!(rendered["version"], first["version"]);
    let (_, metrics) = server.request("GET", "/metrics", &[], b"");
    assert!(
        metrics.contains("teleprompt_last_reload_success 0"),
        "{metrics}"
    );

    // Fixed: a new version, no error.
    save(root.join("task.j2"), "v3 {{ n }}");
    let entry = server.wait_for("task", |entry| {
        entry["error"].is_null() && entry["version"] != first["version"]
    });
    let (_, rendered) = server.render("task", &json!({"data": {"n": 1}}));
    assert_eq!(rendered["output"], "v3 1");
    assert_eq!(rendered["version"], entry["version"]);
    let (_, metrics) = server.request("GET", "/metrics", &[], b"");
    assert!(
        metrics.contains("teleprompt_last_reload_success 1"),
        "{metrics}"
    );

    // A new file is served; a removed one is gone.
    save(root.join("new.gotmpl"), "new {{ .n }}");
    server.wait_for("new", |entry| entry.is_object());
    std::fs::remove_file(root.join("new.gotmpl")).expect("removable");
    server.wait_for("new", Value::is_null);
    let (status, _) = server.render("new", &json!({}));
    assert_eq!(status, 404);

    server.stop().expect("stops cleanly");
}

#[test]
fn no_request_is_lost_while_the_library_reloads() {
    let root = dir("serve-reload-load", &[("task.j2", "a {{ n }}")]);
    let server = Arc::new(Running::start(config(&root)));
    let stop = Arc::new(AtomicBool::new(false));
    let editor = {
        let stop = Arc::clone(&stop);
        let root = root.clone();
        std::thread::spawn(move || {
            let mut edits = 0;
            while !stop.load(Ordering::Relaxed) {
                let text = if edits % 2 == 0 {
                    "b {{ n }}"
                } else {
                    "a {{ n }}"
                };
                save(root.join("task.j2"), text);
                edits += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            edits
        })
    };
    let clients: Vec<_> = (0..3)
        .map(|_| {
            let server = Arc::clone(&server);
            std::thread::spawn(move || {
                for _ in 0..150 {
                    let (status, rendered) = server.render("task", &json!({"data": {"n": 1}}));
                    assert_eq!(status, 200, "{rendered}");
                    let output = rendered["output"].as_str().unwrap_or_default();
                    assert!(output == "a 1" || output == "b 1", "{output}");
                }
            })
        })
        .collect();
    for client in clients {
        client.join().expect("every request answered 200");
    }
    stop.store(true, Ordering::Relaxed);
    assert!(editor.join().expect("edits") > 1);
    let (_, metrics) = server.request("GET", "/metrics", &[], b"");
    assert!(
        metrics.contains("teleprompt_renders_total{prompt=\"task\",outcome=\"ok\"} 450"),
        "{metrics}"
    );
    Arc::try_unwrap(server)
        .ok()
        .expect("one owner")
        .stop()
        .expect("stops cleanly");
}

#[test]
fn a_token_guards_everything_but_health() {
    let root = dir("serve-token", &[("task.j2", "hi")]);
    let server = Running::start(Config {
        token: Some("s3cret".into()),
        ..config(&root)
    });
    let (status, _) = server.get("/healthz");
    assert_eq!(status, 200);
    let (status, body) = server.request("POST", "/v1/prompts/task/render", &[], b"{}");
    assert_eq!(status, 401, "{body}");
    let (status, _) = server.request("GET", "/metrics", &[], b"");
    assert_eq!(status, 401);
    let (status, _) = server.request(
        "GET",
        "/v1/prompts",
        &[("Authorization", "Bearer wrong")],
        b"",
    );
    assert_eq!(status, 401);
    let (status, body) = server.request(
        "POST",
        "/v1/prompts/task/render",
        &[("Authorization", "Bearer s3cret")],
        b"",
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"output\":\"hi\""), "{body}");
    server.stop().expect("stops cleanly");
}

#[test]
fn shutdown_answers_the_requests_in_flight() {
    // A render that takes a while: a loop of many steps.
    let root = dir(
        "serve-shutdown",
        &[(
            "slow.j2",
            "{% for i in range(n) %}{% for j in range(n) %}{% endfor %}{% endfor %}done",
        )],
    );
    let server = Running::start(config(&root));
    let address = server.address;
    let in_flight = std::thread::spawn(move || {
        let probe = Running {
            address,
            stop: None,
            thread: None,
        };
        let started = Instant::now();
        let answer = probe.render("slow", &json!({"data": {"n": 1200}}));
        (answer, started.elapsed())
    });
    std::thread::sleep(Duration::from_millis(100));
    server.stop().expect("stops cleanly");
    let ((status, rendered), took) = in_flight.join().expect("answered");
    eprintln!("the render in flight took {took:?}");
    assert_eq!(status, 200, "{rendered}");
    assert_eq!(rendered["output"], "done");
    // Stopped: no new connection is taken.
    assert!(TcpStream::connect(address).is_err());
}
