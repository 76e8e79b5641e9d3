//! The routes: render, list, describe, health, metrics; the token check;
//! errors as JSON with the status that fits.

use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, FromRequest, Path, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use teleprompt::{
    Error, ErrorClass, LibraryEntry, OutputFormat, Prompt, RenderRequest, RequestError,
};
use tokio::sync::OwnedSemaphorePermit;

use crate::AppState;

/// The service's routes over `state`.
pub fn router(state: Arc<AppState>) -> Router {
    let limit = state.max_request_bytes;
    Router::new()
        .route("/v1/prompts", get(list))
        .route("/v1/prompts/{name}", get(describe))
        .route("/v1/prompts/{name}/render", post(render))
        .route("/metrics", get(metrics))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            require_token,
        ))
        .route("/healthz", get(health))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(limit))
        .with_state(state)
}

/// An error answer: a status and `{"error": {...}}`.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    body: Value,
}

impl ApiError {
    /// An error of the service itself (not of a prompt): a class such as
    /// `request` or `not-found`, a message, and a suggestion.
    fn plain(status: StatusCode, class: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            body: json!({"class": class, "message": message.into()}),
        }
    }

    fn with_help(mut self, help: Option<String>) -> ApiError {
        if let (Some(help), Value::Object(body)) = (help, &mut self.body) {
            body.insert("help".into(), json!(help));
        }
        self
    }

    /// A teleprompt error, as `check --format json` gives it.
    fn from_error(error: &Error) -> ApiError {
        let status = match error.class() {
            ErrorClass::Render | ErrorClass::Input => StatusCode::UNPROCESSABLE_ENTITY,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError {
            status,
            body: error.to_json(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.body }))).into_response()
    }
}

async fn require_token(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    request: Request,
    next: Next,
) -> Response {
    let Some(token) = &state.token else {
        return next.run(request).await;
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    match given {
        Some(given) if same_secret(given.as_bytes(), token.as_bytes()) => next.run(request).await,
        Some(_) => ApiError::plain(
            StatusCode::UNAUTHORIZED,
            "auth",
            "the bearer token is wrong",
        )
        .into_response(),
        None => ApiError::plain(
            StatusCode::UNAUTHORIZED,
            "auth",
            "this server asks for a bearer token: send `Authorization: Bearer TOKEN`",
        )
        .into_response(),
    }
}

/// Compares two secrets in time that does not depend on where they differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    let mut differ = a.len() ^ b.len();
    for (index, byte) in a.iter().enumerate() {
        differ |= usize::from(byte ^ b.get(index % b.len().max(1)).copied().unwrap_or(0));
    }
    differ == 0
}

async fn health(State(state): State<Arc<AppState>>) -> Json<Value> {
    let library = state.library.snapshot();
    Json(json!({
        "status": "ok",
        "prompts": library.len(),
        "files_with_errors": library.errors().count(),
    }))
}

async fn not_found() -> ApiError {
    ApiError::plain(
        StatusCode::NOT_FOUND,
        "not-found",
        "no such route: the routes are POST /v1/prompts/{name}/render, GET /v1/prompts, GET /v1/prompts/{name}, GET /healthz and GET /metrics",
    )
}

async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render_text(),
    )
        .into_response()
}

async fn list(State(state): State<Arc<AppState>>) -> Json<Value> {
    let library = state.library.snapshot();
    let prompts: Vec<Value> = library.entries().map(summary).collect();
    // Files that serve nothing: they never loaded.
    let errors: Vec<Value> = library
        .errors()
        .filter(|(file, _)| !library.entries().any(|entry| entry.file() == Some(*file)))
        .map(|(file, error)| json!({"file": file.display().to_string(), "error": error.to_json()}))
        .collect();
    Json(json!({"prompts": prompts, "errors": errors}))
}

async fn describe(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let library = state.library.snapshot();
    let entry = find(&library, &name)?;
    let mut value = summary(entry);
    if let Value::Object(object) = &mut value {
        object.insert(
            "metadata".into(),
            Value::Object(entry.prompt().metadata().clone()),
        );
        object.insert(
            "included_files".into(),
            json!(entry
                .prompt()
                .included_files()
                .map(|path| path.display().to_string())
                .collect::<Vec<_>>()),
        );
    }
    Ok(Json(value))
}

/// A prompt as listed: name, syntax, description, file, version,
/// declared inputs (JSON Schema), and the error of its file when the
/// version served is not the file's current text.
fn summary(entry: &LibraryEntry) -> Value {
    let prompt = entry.prompt();
    json!({
        "name": entry.name(),
        "syntax": prompt.syntax().as_str(),
        "description": prompt.description(),
        "file": entry.file().map(|file| file.display().to_string()),
        "version": entry.version(),
        "inputs": prompt.input_schema().map(|schema| schema.json_schema().clone()),
        "error": entry.error().map(Error::to_json),
    })
}

fn find<'l>(library: &'l teleprompt::Library, name: &str) -> Result<&'l LibraryEntry, ApiError> {
    library.entry(name).ok_or_else(|| {
        let closest = library
            .entries()
            .map(|entry| (strsim::jaro_winkler(name, entry.name()), entry.name()))
            .filter(|(score, _)| *score > 0.8)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, name)| format!("did you mean \"{name}\"?"));
        ApiError::plain(
            StatusCode::NOT_FOUND,
            "not-found",
            format!("no prompt named \"{name}\""),
        )
        .with_help(closest)
    })
}

async fn render(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    request: Request,
) -> Response {
    let started = Instant::now();
    // A body that trickles in holds its connection only so long.
    let body =
        match tokio::time::timeout(state.body_timeout, Bytes::from_request(request, &())).await {
            Ok(body) => body,
            Err(_elapsed) => {
                return ApiError::plain(
                    StatusCode::REQUEST_TIMEOUT,
                    "request",
                    format!(
                "the request body took longer than {} ms to arrive (the server's --body-timeout)",
                state.body_timeout.as_millis()
            ),
                )
                .into_response()
            }
        };
    let reserve = match admit(&state, body.as_ref().map_or(0, Bytes::len)) {
        Ok(reserve) => Arc::new(reserve),
        Err(busy) => {
            let known = state.library.snapshot().get(&name).is_some();
            state.metrics.rendered(
                known.then_some(name.as_str()),
                Some("busy"),
                started.elapsed(),
            );
            return busy;
        }
    };
    let outcome = render_request(&state, &name, body, Arc::clone(&reserve)).await;
    let class = match &outcome {
        Ok(_) => None,
        Err(error) => Some(
            error
                .body
                .get("class")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_string(),
        ),
    };
    // Only names the library knows get a series of their own: any other
    // name (whatever went wrong with its request) counts as unknown.
    let known = state.library.snapshot().get(&name).is_some();
    state.metrics.rendered(
        known.then_some(name.as_str()),
        class.as_deref(),
        started.elapsed(),
    );
    let response = match outcome {
        Ok(body) => Json(body).into_response(),
        Err(error) => {
            tracing::debug!(prompt = %name, status = %error.status, error = %error.body, "render failed");
            error.into_response()
        }
    };
    // The reservation lasts until the response has been sent.
    response.map(|body| {
        Body::new(Reserved {
            body,
            _reserve: reserve,
        })
    })
}

/// What a render holds while in flight: a render slot and its share of
/// the memory bound, given back when the render has stopped and its
/// response has been sent.
struct Reservation {
    _render: OwnedSemaphorePermit,
    _memory: OwnedSemaphorePermit,
}

/// A render's slot and memory, or 503 with `Retry-After` when either bound
/// is reached.
#[allow(clippy::result_large_err)]
fn admit(state: &AppState, body_bytes: usize) -> Result<Reservation, Response> {
    let busy = |message: String| {
        let mut response =
            ApiError::plain(StatusCode::SERVICE_UNAVAILABLE, "busy", message).into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
        response
    };
    let render = Arc::clone(&state.renders)
        .try_acquire_owned()
        .map_err(|_| {
            busy(format!(
                "{} renders are in flight (the server's --max-renders): try again shortly",
                state.max_renders
            ))
        })?;
    let total = u32::try_from(state.memory_units()).unwrap_or(u32::MAX);
    let wanted = state
        .max_output
        .saturating_mul(2)
        .saturating_add(body_bytes.saturating_mul(12))
        .div_ceil(crate::MEMORY_UNIT);
    let units = u32::try_from(wanted).unwrap_or(u32::MAX).clamp(1, total);
    let memory = Arc::clone(&state.memory)
        .try_acquire_many_owned(units)
        .map_err(|_| {
            busy(format!(
                "the renders in flight hold the server's memory bound ({} bytes, --max-inflight-bytes): try again shortly",
                state.max_inflight_bytes
            ))
        })?;
    Ok(Reservation {
        _render: render,
        _memory: memory,
    })
}

/// A response body that holds a [`Reservation`] until it has been sent.
struct Reserved {
    body: Body,
    _reserve: Arc<Reservation>,
}

impl http_body::Body for Reserved {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        std::pin::Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

async fn render_request(
    state: &Arc<AppState>,
    name: &str,
    request: Result<Bytes, BytesRejection>,
    reserve: Arc<Reservation>,
) -> Result<Value, ApiError> {
    // The body is JSON whatever its Content-Type says (`curl -d` sends a
    // form type); an empty body asks for a render without data.
    let body = request.map_err(|rejection| {
        let status = rejection.status();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            format!(
                "the request is larger than {} bytes (the server's --max-request-bytes)",
                state.max_request_bytes
            )
        } else {
            format!("cannot read the request: {}", rejection.body_text())
        };
        ApiError::plain(status, "request", message)
    })?;
    let (format, request) = if body.iter().all(u8::is_ascii_whitespace) {
        (None, RenderRequest::default())
    } else {
        read_request(&body).map_err(|message| {
            ApiError::plain(
                StatusCode::BAD_REQUEST,
                "request",
                format!("malformed request: {message}"),
            )
            .with_help(Some(
                "the body is a JSON object: {\"data\": {…}, \"history\": […], \"turn\": N, \"attempt\": N, \"now\": \"RFC 3339\", \"time_zone\": \"IANA name\", \"format\": \"text|messages|openai|anthropic|bedrock\", \"labels\": {…}}".to_string(),
            ))
        })?
    };
    let library = state.library.snapshot();
    let entry = find(&library, name)?;
    let prompt = Arc::clone(entry.prompt());
    let version = entry.version().to_string();
    let format = match format.as_deref() {
        None => OutputFormat::Text,
        Some(text) => text
            .parse()
            .map_err(|error: teleprompt::messages::UnknownFormat| {
                ApiError::plain(StatusCode::BAD_REQUEST, "request", error.to_string())
            })?,
    };
    // Renders run beside the async workers: a slow one holds no
    // connection up but its own.
    // The render stops itself at its deadline (the library's check comes
    // within milliseconds), gives its reservation back, and the request
    // gets the timeout answer. The wait has a bound of its own, a little
    // later, in case a render misses its deadline: the render then keeps
    // its reservation until it stops, so renders cannot pile up.
    let render_timeout = state.render_timeout;
    let mut request = request;
    request.deadline = Some(Instant::now() + render_timeout);
    let work = tokio::task::spawn_blocking(move || {
        let _reserve = reserve;
        render_blocking(&prompt, request, format, render_timeout)
    });
    let wait = render_timeout.saturating_add(STOP_GRACE);
    let output = match tokio::time::timeout(wait, work).await {
        Ok(Ok(result)) => result?,
        Ok(Err(_panicked)) => {
            return Err(ApiError::plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the render stopped unexpectedly",
            ))
        }
        Err(_elapsed) => return Err(timed_out(render_timeout)),
    };
    let mut body = json!({
        "prompt": name,
        "version": version,
        "format": format.as_str(),
        "output": output.output,
    });
    if let Value::Object(object) = &mut body {
        if !output.warnings.is_empty() {
            object.insert("warnings".into(), json!(output.warnings));
        }
        if let Some(error) = output.recovered {
            // `on_error: original`: the unrendered text, and why.
            object.insert("recovered_error".into(), error);
        }
    }
    Ok(body)
}

/// The body: the output `format`, and the rest a [`RenderRequest`] (whose
/// unknown fields are refused).
fn read_request(body: &[u8]) -> Result<(Option<String>, RenderRequest), String> {
    // Read as every data file is: a key twice in one object is an error
    // (`render --data`, `batch`), not the last one silently winning.
    let text = std::str::from_utf8(body).map_err(|error| {
        format!(
            "the body is not UTF-8 text (invalid byte at offset {})",
            error.valid_up_to()
        )
    })?;
    let value = teleprompt::data::parse_text(text, Some(teleprompt::data::Format::Json), "request")
        .map_err(|error| match error.location() {
            Some(at) => format!(
                "{} (line {}, column {})",
                error.message(),
                at.line,
                at.column
            ),
            None => error.message().to_string(),
        })?;
    let Value::Object(mut fields) = value else {
        return Err(format!(
            "the body is {}, not a JSON object",
            teleprompt::data::describe(&value)
        ));
    };
    let format = match fields.remove("format") {
        None | Some(Value::Null) => None,
        Some(Value::String(format)) => Some(format),
        Some(other) => return Err(format!("format must be a string, not {other}")),
    };
    let request =
        serde_json::from_value(Value::Object(fields)).map_err(|error| error.to_string())?;
    Ok((format, request))
}

struct Output {
    output: Value,
    warnings: Vec<String>,
    recovered: Option<Value>,
}

/// How much longer than `--render-timeout` a request waits for a render
/// told to stop at its deadline, before it answers without it.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// The answer to a render that ran past `--render-timeout`.
fn timed_out(timeout: std::time::Duration) -> ApiError {
    ApiError::plain(
        StatusCode::SERVICE_UNAVAILABLE,
        "timeout",
        format!(
            "the render took longer than {} ms (the server's --render-timeout)",
            timeout.as_millis()
        ),
    )
}

fn render_blocking(
    prompt: &Prompt,
    request: RenderRequest,
    format: OutputFormat,
    timeout: std::time::Duration,
) -> Result<Output, ApiError> {
    let rendered = request.render(prompt).map_err(|error| match error {
        RequestError::Malformed(message) => {
            ApiError::plain(StatusCode::BAD_REQUEST, "request", message)
        }
        // Stopped at its deadline: the timeout's answer.
        RequestError::Render(error) if error.kind() == Some("timeout") => timed_out(timeout),
        RequestError::Render(error) => ApiError::from_error(&error),
    })?;
    let output = match format {
        OutputFormat::Text => Value::String(rendered.text().to_string()),
        format => rendered
            .to_format(format)
            .map_err(|error| ApiError::from_error(&error))?,
    };
    Ok(Output {
        output,
        warnings: rendered.warnings().to_vec(),
        recovered: rendered.recovered_error().map(Error::to_json),
    })
}

#[cfg(test)]
mod tests {
    use super::same_secret;

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"ab", b"abc"));
        assert!(!same_secret(b"abcd", b"abc"));
        assert!(!same_secret(b"", b"a"));
        assert!(same_secret(b"", b""));
    }
}
