//! What `/metrics` reports, in Prometheus' text format: renders by prompt,
//! errors by class, render latency, reloads and how the last one went.
//!
//! A handful of counters and one histogram: written here in a few lines
//! rather than through a metrics framework and its dependencies.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use teleprompt::{Error, Library, ReloadReport};

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.1, 0.5, 2.5,
];

#[derive(Debug, Default)]
pub(crate) struct Metrics {
    /// Renders by prompt name; requests for names the library does not
    /// know count as `(unknown)`, whatever their error, so that they
    /// cannot grow the map.
    renders: Mutex<BTreeMap<String, Counts>>,
    /// Failed renders by error class.
    errors: Mutex<BTreeMap<String, u64>>,
    /// Latency histogram: one count per bucket, then +Inf.
    buckets: [AtomicU64; BUCKETS.len() + 1],
    latency_micros: AtomicU64,
    reloads_ok: AtomicU64,
    reloads_failed: AtomicU64,
    /// The last reload: 1 when every file loaded.
    last_reload_clean: AtomicU64,
    last_reload_seconds: AtomicU64,
    prompts: AtomicU64,
    files_with_errors: AtomicU64,
}

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    ok: u64,
    failed: u64,
}

impl Metrics {
    /// A render of `prompt` (`None`: a name the library does not know).
    pub(crate) fn rendered(&self, prompt: Option<&str>, error_class: Option<&str>, took: Duration) {
        if let Ok(mut renders) = self.renders.lock() {
            let key = prompt.unwrap_or("(unknown)");
            let counts = match renders.get_mut(key) {
                Some(counts) => counts,
                None => renders.entry(key.to_string()).or_default(),
            };
            match error_class {
                None => counts.ok += 1,
                Some(_) => counts.failed += 1,
            }
        }
        if let Some(class) = error_class {
            if let Ok(mut errors) = self.errors.lock() {
                *errors.entry(class.to_string()).or_default() += 1;
            }
        }
        let seconds = took.as_secs_f64();
        let bucket = BUCKETS
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(BUCKETS.len());
        if let Some(count) = self.buckets.get(bucket) {
            count.fetch_add(1, Ordering::Relaxed);
        }
        self.latency_micros.fetch_add(
            u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// The library as loaded at start.
    pub(crate) fn loaded(&self, library: &Library) {
        self.last_reload_clean.store(
            u64::from(library.errors().next().is_none()),
            Ordering::Relaxed,
        );
        self.library_size(library);
    }

    pub(crate) fn reloaded(&self, outcome: &Result<ReloadReport, Error>, library: &Library) {
        let clean = matches!(outcome, Ok(report) if report.failed.is_empty());
        match outcome {
            Ok(_) => self.reloads_ok.fetch_add(1, Ordering::Relaxed),
            Err(_) => self.reloads_failed.fetch_add(1, Ordering::Relaxed),
        };
        self.last_reload_clean
            .store(u64::from(clean), Ordering::Relaxed);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        self.last_reload_seconds.store(now, Ordering::Relaxed);
        self.library_size(library);
    }

    fn library_size(&self, library: &Library) {
        self.prompts.store(library.len() as u64, Ordering::Relaxed);
        self.files_with_errors
            .store(library.errors().count() as u64, Ordering::Relaxed);
    }

    /// The exposition text.
    pub(crate) fn render_text(&self) -> String {
        let mut out = String::new();
        let load = |value: &AtomicU64| value.load(Ordering::Relaxed);
        out.push_str("# HELP teleprompt_renders_total Renders answered, by prompt and outcome.\n");
        out.push_str("# TYPE teleprompt_renders_total counter\n");
        if let Ok(renders) = self.renders.lock() {
            for (prompt, counts) in renders.iter() {
                let prompt = escape(prompt);
                let _ = writeln!(
                    out,
                    "teleprompt_renders_total{{prompt=\"{prompt}\",outcome=\"ok\"}} {}",
                    counts.ok
                );
                let _ = writeln!(
                    out,
                    "teleprompt_renders_total{{prompt=\"{prompt}\",outcome=\"error\"}} {}",
                    counts.failed
                );
            }
        }
        out.push_str("# HELP teleprompt_render_errors_total Failed renders by error class.\n");
        out.push_str("# TYPE teleprompt_render_errors_total counter\n");
        if let Ok(errors) = self.errors.lock() {
            for (class, count) in errors.iter() {
                let _ = writeln!(
                    out,
                    "teleprompt_render_errors_total{{class=\"{}\"}} {count}",
                    escape(class)
                );
            }
        }
        out.push_str(
            "# HELP teleprompt_render_duration_seconds Time to answer a render request.\n",
        );
        out.push_str("# TYPE teleprompt_render_duration_seconds histogram\n");
        let mut cumulative = 0;
        for (index, count) in self.buckets.iter().enumerate() {
            cumulative += load(count);
            let bound = BUCKETS
                .get(index)
                .map_or_else(|| "+Inf".to_string(), |bound| bound.to_string());
            let _ = writeln!(
                out,
                "teleprompt_render_duration_seconds_bucket{{le=\"{bound}\"}} {cumulative}"
            );
        }
        let _ = writeln!(
            out,
            "teleprompt_render_duration_seconds_sum {}",
            load(&self.latency_micros) as f64 / 1e6
        );
        let _ = writeln!(out, "teleprompt_render_duration_seconds_count {cumulative}");
        out.push_str("# HELP teleprompt_reloads_total Library reloads, by whether the folder could be read.\n");
        out.push_str("# TYPE teleprompt_reloads_total counter\n");
        let _ = writeln!(
            out,
            "teleprompt_reloads_total{{status=\"ok\"}} {}",
            load(&self.reloads_ok)
        );
        let _ = writeln!(
            out,
            "teleprompt_reloads_total{{status=\"failed\"}} {}",
            load(&self.reloads_failed)
        );
        out.push_str("# HELP teleprompt_last_reload_success 1 when every prompt file loaded at the last (re)load.\n");
        out.push_str("# TYPE teleprompt_last_reload_success gauge\n");
        let _ = writeln!(
            out,
            "teleprompt_last_reload_success {}",
            load(&self.last_reload_clean)
        );
        out.push_str("# HELP teleprompt_last_reload_timestamp_seconds When the last reload ran (0: none since start).\n");
        out.push_str("# TYPE teleprompt_last_reload_timestamp_seconds gauge\n");
        let _ = writeln!(
            out,
            "teleprompt_last_reload_timestamp_seconds {}",
            load(&self.last_reload_seconds)
        );
        out.push_str("# HELP teleprompt_prompts Prompts served.\n");
        out.push_str("# TYPE teleprompt_prompts gauge\n");
        let _ = writeln!(out, "teleprompt_prompts {}", load(&self.prompts));
        out.push_str("# HELP teleprompt_prompt_files_with_errors Prompt files whose current text does not load.\n");
        out.push_str("# TYPE teleprompt_prompt_files_with_errors gauge\n");
        let _ = writeln!(
            out,
            "teleprompt_prompt_files_with_errors {}",
            load(&self.files_with_errors)
        );
        out
    }
}

/// A label value as the text format wants it.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
