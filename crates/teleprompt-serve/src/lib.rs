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
//! missing or wrong token, 503 a render that ran past the time bound.
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
    /// 10 s). The render's own step budget stops it in any case.
    pub render_timeout: Duration,
    /// Reload when files change (default on), after changes have been
    /// quiet this long.
    pub watch: Option<Duration>,
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
        }
    }
}

/// What the handlers share.
#[derive(Debug)]
pub struct AppState {
    library: Arc<SharedLibrary>,
    metrics: Metrics,
    token: Option<String>,
    max_request_bytes: usize,
    render_timeout: Duration,
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
        };
        state.metrics.loaded(&state.library.snapshot());
        Arc::new(state)
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

    /// Serves until `shutdown` completes, then stops taking connections
    /// and returns once the requests in flight are answered.
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
        axum::serve(self.listener, app)
            .with_graceful_shutdown(shutdown)
            .await?;
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
    runtime.block_on(async move {
        let server = Server::bind(config).await?;
        server.run(shutdown_signal()).await
    })
}
