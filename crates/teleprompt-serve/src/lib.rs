//! `teleprompt serve`: a folder of prompts behind an HTTP JSON API.
//!
//! The service holds a [`SharedLibrary`] — every prompt file of a folder,
//! reloaded when files change, a broken edit keeping the last good version
//! — and renders its prompts on request:
//!
//! | route | what |
//! |---|---|
//! | `POST /v1/prompts/{name}/render` | render with `{data, history, turn, max_turns, attempt, now, time_zone, format, labels}` |
//! | `GET /v1/prompts` | every prompt: name, syntax, description, declared inputs, version, last load error; files that do not load |
//! | `GET /v1/prompts/{name}` | one prompt, with its metadata |
//! | `GET /healthz` | `{"status": "ok", …}` |
//! | `GET /metrics` | Prometheus text: renders, errors by class, latency, reloads |
//!
//! Errors are JSON objects with the fields of `teleprompt check --format
//! json` (`class`, `message`, `file`, `line`, `column`, `help`, …) under
//! `error`, with the status that fits: 404 no such prompt, 422 a render or
//! input error, 400 a malformed request, 413 a request too large, 401 a
//! missing or wrong token, 408 a body slower than the body timeout, 503
//! a render that ran past the time bound or a server at its bound on
//! renders (or their memory) in flight, with `Retry-After`.
//!
//! Connections are bounded too (see [`Config`]): a header-read timeout
//! that also closes idle connections, a cap on open connections, and a
//! shutdown deadline past which half-sent requests are dropped.
//!
//! A server keeps no state between requests besides the library it reads
//! from a folder: several instances over the same folder serve the same
//! prompts, with the same versions, behind any load balancer.
//!
//! ```no_run
//! use teleprompt_serve::{Config, Server};
//!
//! # async fn run() -> std::io::Result<()> {
//! let server = Server::bind(Config::new("prompts")).await?;
//! println!("listening on {}", server.local_addr());
//! server.run(async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```

mod api;
mod metrics;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use teleprompt::{Library, LoadOptions, SharedLibrary};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

pub use api::router;
use metrics::Metrics;

/// How the service runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// The folder of prompts.
    pub dir: PathBuf,
    /// How prompts load (syntax for files that name none, strictness,
    /// limits: `limits.max_output` bounds every render's output).
    pub load: LoadOptions,
    /// The address to listen on (default `127.0.0.1:8080`).
    pub listen: SocketAddr,
    /// A bearer token every request but `/healthz` must carry
    /// (`Authorization: Bearer TOKEN`); `None`: no token asked.
    pub token: Option<String>,
    /// The largest request body, in bytes (default 4 MiB): larger is 413.
    pub max_request_bytes: usize,
    /// How long a render may run before the request gets 503 (default
    /// 10 s): the render is stopped at that deadline (within a few
    /// milliseconds) and its slot freed. The render's own step budget
    /// stops it in any case.
    pub render_timeout: Duration,
    /// Reload when files change (default on), after changes have been
    /// quiet this long.
    pub watch: Option<Duration>,
    /// How long a connection may take to send a request's headers,
    /// counted from when it opens or from its last response (default
    /// 10 s): a connection that trickles its headers, or sits idle
    /// between requests, is closed after it.
    pub header_timeout: Duration,
    /// How long a request's body may take to arrive once its headers have
    /// (default 30 s): past it, 408.
    pub body_timeout: Duration,
    /// The most connections open at once (default 512): beyond it, new
    /// connections wait in the listen backlog until one closes, and the
    /// open ones keep being answered.
    pub max_connections: usize,
    /// The most renders in flight (default 4 × the cores): beyond it, 503
    /// with `Retry-After`. A render that ran past `render_timeout` counts
    /// until it has stopped (a few milliseconds later).
    pub max_renders: usize,
    /// The memory renders and their responses in flight may reserve, in
    /// bytes (default 1 GiB). Each render reserves twice the output bound
    /// (`limits.max_output`: the output, then its JSON) plus 12 times its
    /// request body (parsed data) until its response is sent; one that does
    /// not fit is 503 with `Retry-After`.
    pub max_inflight_bytes: usize,
    /// How long a shutdown waits for the requests in flight (default
    /// 10 s): idle connections close at once, and any still open after it
    /// (a half-sent request, a slow render) are dropped.
    pub shutdown_timeout: Duration,
}

impl Config {
    /// The defaults, serving `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Config {
        Config {
            dir: dir.into(),
            load: LoadOptions::default(),
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            token: None,
            max_request_bytes: 4 << 20,
            render_timeout: Duration::from_secs(10),
            watch: Some(Duration::from_millis(200)),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 512,
            max_renders: 4 * std::thread::available_parallelism().map_or(1, usize::from),
            max_inflight_bytes: 1 << 30,
            shutdown_timeout: Duration::from_secs(10),
        }
    }
}

/// The reservation unit of [`AppState::memory`]: a KiB (a semaphore
/// counts in `u32`).
const MEMORY_UNIT: usize = 1024;

/// What the handlers share.
#[derive(Debug)]
pub struct AppState {
    library: Arc<SharedLibrary>,
    metrics: Metrics,
    token: Option<String>,
    max_request_bytes: usize,
    render_timeout: Duration,
    body_timeout: Duration,
    /// One permit a render in flight.
    renders: Arc<tokio::sync::Semaphore>,
    max_renders: usize,
    /// The memory reserved by renders and responses in flight, in KiB.
    memory: Arc<tokio::sync::Semaphore>,
    max_inflight_bytes: usize,
    /// The output bound of every render (a prompt's front matter may only
    /// lower it).
    max_output: usize,
}

impl AppState {
    /// State over `library`, with `config`'s bounds and token.
    pub fn new(library: Arc<SharedLibrary>, config: &Config) -> Arc<AppState> {
        let state = AppState {
            metrics: Metrics::default(),
            library,
            token: config.token.clone(),
            max_request_bytes: config.max_request_bytes,
            render_timeout: config.render_timeout,
            body_timeout: config.body_timeout,
            renders: Arc::new(tokio::sync::Semaphore::new(config.max_renders.max(1))),
            max_renders: config.max_renders.max(1),
            memory: Arc::new(tokio::sync::Semaphore::new(
                (config.max_inflight_bytes / MEMORY_UNIT).clamp(
                    1,
                    tokio::sync::Semaphore::MAX_PERMITS.min(u32::MAX as usize),
                ),
            )),
            max_inflight_bytes: config.max_inflight_bytes,
            max_output: config.load.limits.max_output,
        };
        state.metrics.loaded(&state.library.snapshot());
        Arc::new(state)
    }

    fn memory_units(&self) -> usize {
        (self.max_inflight_bytes / MEMORY_UNIT).max(1)
    }

    /// The library served.
    pub fn library(&self) -> &Arc<SharedLibrary> {
        &self.library
    }

    /// Reloads the library now and records how it went (what the watcher
    /// does on a change).
    pub fn reload(&self) -> Result<teleprompt::ReloadReport, teleprompt::Error> {
        let outcome = self.library.reload();
        self.reloaded(&outcome);
        outcome
    }

    fn reloaded(&self, outcome: &Result<teleprompt::ReloadReport, teleprompt::Error>) {
        match outcome {
            Ok(report) => {
                for name in report.added.iter().chain(&report.updated) {
                    tracing::info!(prompt = %name, "prompt loaded");
                }
                for name in &report.removed {
                    tracing::info!(prompt = %name, "prompt removed");
                }
                for failed in &report.failed {
                    tracing::warn!(
                        file = %failed.file.display(),
                        error = %failed.error,
                        serving = failed.kept_version.as_deref().unwrap_or("nothing"),
                        "prompt file does not load"
                    );
                }
            }
            Err(error) => tracing::error!(error = %error, "reload failed"),
        }
        self.metrics.reloaded(outcome, &self.library.snapshot());
    }
}

/// A bound server, ready to run.
pub struct Server {
    listener: TcpListener,
    state: Arc<AppState>,
    watch: Option<Duration>,
    header_timeout: Duration,
    max_connections: usize,
    shutdown_timeout: Duration,
}

impl Server {
    /// Loads the folder (files that do not load are listed, not fatal)
    /// and binds the address. Fails when the folder cannot be read or the
    /// address cannot be bound.
    pub async fn bind(config: Config) -> std::io::Result<Server> {
        let library = Library::open(&config.dir, &config.load)
            .map_err(|error| std::io::Error::other(error.to_string()))?;
        for (file, error) in library.errors() {
            tracing::warn!(file = %file.display(), error = %error, "prompt file does not load");
        }
        let library = Arc::new(SharedLibrary::new(library));
        let listener = TcpListener::bind(config.listen).await?;
        Ok(Server {
            listener,
            state: AppState::new(library, &config),
            watch: config.watch,
            header_timeout: config.header_timeout,
            max_connections: config.max_connections.max(1),
            shutdown_timeout: config.shutdown_timeout,
        })
    }

    /// The address bound (with the port chosen when it asked for 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// The state the handlers share (its library, to reload by hand).
    pub fn state(&self) -> &Arc<AppState> {
        &self.state
    }

    /// Serves until `shutdown` completes, then stops taking connections,
    /// closes the idle ones, and returns once the requests in flight are
    /// answered or `shutdown_timeout` has passed, whichever comes first.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let _watcher = match self.watch {
            Some(debounce) => {
                let state = Arc::clone(&self.state);
                let watcher = self
                    .state
                    .library
                    .watch(debounce, move |outcome| state.reloaded(&outcome))
                    .map_err(|error| std::io::Error::other(error.to_string()))?;
                Some(watcher)
            }
            None => None,
        };
        tracing::info!(address = %self.local_addr(), "serving");
        let app = router(Arc::clone(&self.state));
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(self.header_timeout);
        let connections = Arc::new(Semaphore::new(self.max_connections));
        let (stop, stopping) = tokio::sync::watch::channel(false);
        let mut open = tokio::task::JoinSet::new();
        let listener = self.listener;
        tokio::pin!(shutdown);
        loop {
            // A connection past the cap waits in the backlog, unaccepted.
            let permit = tokio::select! {
                () = &mut shutdown => break,
                permit = Arc::clone(&connections).acquire_owned() => match permit {
                    Ok(permit) => permit,
                    Err(_) => break,
                },
            };
            let stream = tokio::select! {
                () = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _peer)) => stream,
                    Err(error) => {
                        // Out of file descriptors, or a connection reset
                        // before it was accepted: the others go on.
                        tracing::warn!(error = %error, "cannot accept a connection");
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                },
            };
            while open.try_join_next().is_some() {}
            let service = hyper_util::service::TowerToHyperService::new(app.clone());
            let connection = http.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let mut stopping = stopping.clone();
            open.spawn(async move {
                let _permit = permit;
                tokio::pin!(connection);
                tokio::select! {
                    _ = connection.as_mut() => return,
                    _ = stopping.wait_for(|stop| *stop) => {}
                }
                // Idle: closes now; a request in flight: closes once answered.
                connection.as_mut().graceful_shutdown();
                let _ = connection.await;
            });
        }
        drop(listener);
        let _ = stop.send(true);
        let waiting = open.len();
        let finished = tokio::time::timeout(self.shutdown_timeout, async {
            while open.join_next().await.is_some() {}
        })
        .await;
        if finished.is_err() {
            tracing::warn!(
                connections = open.len(),
                of = waiting,
                "shutdown deadline passed: dropping the connections still open"
            );
            open.abort_all();
            while open.join_next().await.is_some() {}
        }
        tracing::info!("stopped");
        Ok(())
    }
}

/// Completes on SIGTERM or Ctrl-C (SIGINT): the signal to stop serving.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing the requests in flight");
}

/// How logs are written (on stderr).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// One line of text per event.
    Text,
    /// One JSON object per event.
    Json,
}

/// Sends `tracing` events to stderr, at the level `TELEPROMPT_LOG` names
/// (`info` by default; `debug` shows every failed render). Does nothing
/// when logging was set up already.
pub fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TELEPROMPT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// Serves `config` until SIGTERM or Ctrl-C, on a runtime of its own
/// (what `teleprompt serve` runs).
pub fn serve_until_signal(config: Config) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(async move {
        let server = Server::bind(config).await?;
        server.run(shutdown_signal()).await
    });
    // A render still running (past its timeout) does not hold the exit up.
    runtime.shutdown_background();
    outcome
}
