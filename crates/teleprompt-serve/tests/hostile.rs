//! `serve` on an open network: connections that trickle or sit idle are
//! closed after the header timeout, a cap on connections keeps the
//! service answering, a half-sent request does not hold shutdown up past
//! its deadline, renders in flight are bounded in number and in memory
//! (503 with `Retry-After` beyond), and a render past its timeout is
//! stopped and frees its slot.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
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

/// A template whose render takes a while: `n`² loop passes.
const SLOW: &str = "{% for i in range(n) %}{% for j in range(n) %}{% endfor %}{% endfor %}done";

fn config(dir: &Path) -> Config {
    Config {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        watch: None,
        ..Config::new(dir)
    }
}

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
            let outcome = runtime.block_on(async move {
                let server = Server::bind(config).await?;
                let _ = address_tx.send(server.local_addr());
                server
                    .run(async move {
                        let _ = stop_rx.await;
                    })
                    .await
            });
            // As `serve_until_signal`: a render still running does not hold the exit.
            runtime.shutdown_background();
            outcome
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

    /// Stops the server: how long it took to return.
    fn stop(mut self) -> Duration {
        let started = Instant::now();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.thread
            .take()
            .expect("running")
            .join()
            .expect("the server thread does not panic")
            .expect("stops cleanly");
        started.elapsed()
    }
}

/// One request on a fresh connection: the status, the head, the body.
fn request(address: SocketAddr, path: &str, body: &Value) -> (u16, String, Value) {
    let body = serde_json::to_vec(body).expect("JSON");
    let mut stream = TcpStream::connect(address).expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("a timeout");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("writes");
    stream.write_all(&body).expect("writes");
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let response = String::from_utf8(response).expect("UTF-8");
    let (head, body) = response
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no head in {response:?}"));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("a status line");
    let body = serde_json::from_str(body).unwrap_or(Value::String(body.to_string()));
    (status, head.to_ascii_lowercase(), body)
}

/// Whether the server closed `stream` (a read gives end of file or a
/// reset) within `within`.
fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    stream.set_read_timeout(Some(within)).expect("a timeout");
    let mut byte = [0u8; 256];
    loop {
        match stream.read(&mut byte) {
            Ok(0) => return true,
            // hyper may answer 408 before it closes.
            Ok(_) => {}
            Err(error) => {
                return !matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                )
            }
        }
    }
}

#[test]
fn a_connection_that_trickles_its_headers_is_closed() {
    let root = dir("hostile-trickle", &[("hello.j2", "Hello {{ name }}.")]);
    let server = Running::start(Config {
        header_timeout: Duration::from_millis(300),
        ..config(&root)
    });
    let mut slow = TcpStream::connect(server.address).expect("connects");
    let started = Instant::now();
    // One byte every 50 ms: the head never completes within the timeout.
    let mut cut = false;
    for byte in b"POST /v1/prompts/hello/render HTTP/1.1\r\nHost: test\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
        if slow.write_all(&[*byte]).is_err() {
            cut = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        if started.elapsed() > Duration::from_secs(3) {
            break;
        }
    }
    assert!(
        cut || closed_within(&mut slow, Duration::from_secs(3)),
        "a trickling connection stays open"
    );
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "closed only after {took:?}");
    // The others are answered all along.
    let (status, _, body) = request(
        server.address,
        "/v1/prompts/hello/render",
        &json!({"data": {"name": "you"}}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["output"], "Hello you.");
    server.stop();
}

#[test]
fn idle_connections_past_the_cap_do_not_stop_the_service() {
    let root = dir("hostile-idle", &[("hello.j2", "Hello {{ name }}.")]);
    let server = Running::start(Config {
        header_timeout: Duration::from_millis(300),
        max_connections: 4,
        ..config(&root)
    });
    // Three times the cap, sending nothing.
    let mut idle: Vec<TcpStream> = (0..12)
        .map(|_| TcpStream::connect(server.address).expect("the backlog takes it"))
        .collect();
    let started = Instant::now();
    let (status, _, body) = request(
        server.address,
        "/v1/prompts/hello/render",
        &json!({"data": {"name": "you"}}),
    );
    let took = started.elapsed();
    assert_eq!(status, 200, "{body}");
    eprintln!("answered beside 12 idle connections (cap 4) in {took:?}");
    // Waited for the idle ones to time out (3 rounds of 300 ms), not forever.
    assert!(
        took < Duration::from_secs(4),
        "answered only after {took:?}"
    );
    // Every idle connection was closed.
    for stream in &mut idle {
        assert!(closed_within(stream, Duration::from_secs(3)));
    }
    server.stop();
}

#[test]
fn a_half_sent_request_does_not_hold_shutdown_past_its_deadline() {
    let root = dir("hostile-half-sent", &[("hello.j2", "Hello {{ name }}.")]);
    let server = Running::start(Config {
        // Long: only the shutdown deadline can end these connections.
        header_timeout: Duration::from_secs(60),
        body_timeout: Duration::from_secs(60),
        shutdown_timeout: Duration::from_millis(300),
        ..config(&root)
    });
    // Half a head.
    let mut head = TcpStream::connect(server.address).expect("connects");
    head.write_all(b"POST /v1/prompts/hello/render HTTP/1.1\r\nHost: te")
        .expect("writes");
    // A whole head, a tenth of the body.
    let mut body = TcpStream::connect(server.address).expect("connects");
    body.write_all(
        b"POST /v1/prompts/hello/render HTTP/1.1\r\nHost: test\r\nContent-Length: 100\r\n\r\n{\"data\":",
    )
    .expect("writes");
    // An idle one.
    let mut idle = TcpStream::connect(server.address).expect("connects");
    std::thread::sleep(Duration::from_millis(100));
    let took = server.stop();
    eprintln!("stopped in {took:?}");
    assert!(took < Duration::from_secs(2), "shutdown took {took:?}");
    for stream in [&mut head, &mut body, &mut idle] {
        assert!(closed_within(stream, Duration::from_secs(2)));
    }
}

#[test]
fn a_body_that_trickles_gets_408() {
    let root = dir("hostile-slow-body", &[("hello.j2", "Hello {{ name }}.")]);
    let server = Running::start(Config {
        body_timeout: Duration::from_millis(300),
        ..config(&root)
    });
    let mut stream = TcpStream::connect(server.address).expect("connects");
    stream
        .write_all(
            b"POST /v1/prompts/hello/render HTTP/1.1\r\nHost: test\r\nContent-Length: 100\r\n\r\n{",
        )
        .expect("writes");
    stream
        .set_read_timeout(Some(Duration::from_secs(3)))
        .expect("a timeout");
    let started = Instant::now();
    let mut answer = [0u8; 12];
    stream.read_exact(&mut answer).expect("an answer");
    assert_eq!(
        &answer,
        b"HTTP/1.1 408",
        "{}",
        String::from_utf8_lossy(&answer)
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    server.stop();
}

#[test]
fn a_render_past_its_timeout_is_stopped_and_frees_its_slot() {
    let root = dir(
        "hostile-runaway",
        &[("slow.j2", SLOW), ("hello.j2", "Hello {{ name }}.")],
    );
    let mut config = config(&root);
    config.render_timeout = Duration::from_millis(100);
    config.max_renders = 1;
    // No step budget to stop it: only the timeout does.
    config.load.limits.max_steps = u64::MAX;
    let server = Running::start(config);
    // 10^10 loop passes: minutes, far past the timeout.
    let started = Instant::now();
    let (status, _, body) = request(
        server.address,
        "/v1/prompts/slow/render",
        &json!({"data": {"n": 100000}}),
    );
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["class"], "timeout", "{body}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // The render was stopped: the one render slot is free at once.
    for _ in 0..3 {
        let (status, _, body) = request(
            server.address,
            "/v1/prompts/hello/render",
            &json!({"data": {"name": "you"}}),
        );
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["output"], "Hello you.", "{body}");
    }
    let took = server.stop();
    assert!(took < Duration::from_secs(2), "shutdown took {took:?}");
}

#[test]
fn concurrent_big_renders_stay_under_the_memory_bound() {
    let root = dir("hostile-memory", &[("slow.j2", SLOW)]);
    let mut config = config(&root);
    // Each render reserves 2 × 1 MiB + 12 × its body: two fit in 5 MiB.
    config.load.limits.max_output = 1 << 20;
    config.max_inflight_bytes = 5 << 20;
    config.max_renders = 64;
    let server = Running::start(config);
    let address = server.address;
    let start = std::sync::Arc::new(std::sync::Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let start = std::sync::Arc::clone(&start);
            std::thread::spawn(move || {
                start.wait();
                request(
                    address,
                    "/v1/prompts/slow/render",
                    &json!({"data": {"n": 1200, "pad": "x".repeat(20_000)}}),
                )
            })
        })
        .collect();
    let answers: Vec<_> = threads
        .into_iter()
        .map(|thread| thread.join().expect("answered"))
        .collect();
    let ok = answers.iter().filter(|(status, ..)| *status == 200).count();
    let busy: Vec<_> = answers
        .iter()
        .filter(|(status, ..)| *status == 503)
        .collect();
    assert_eq!(ok + busy.len(), 8, "{answers:?}");
    assert!(ok >= 1, "{answers:?}");
    assert!(
        !busy.is_empty(),
        "eight renders of 2.2 MiB each all fit in 5 MiB: {answers:?}"
    );
    for (_, head, body) in busy {
        assert_eq!(body["error"]["class"], "busy", "{body}");
        assert!(head.contains("retry-after: 1"), "{head}");
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|message| message.contains("--max-inflight-bytes")),
            "{body}"
        );
    }
    server.stop();
}
