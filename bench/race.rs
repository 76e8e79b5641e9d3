//! Two or more engines timed side by side, as the `jinja/` and
//! `handlebars/` bench programs do (included by path): each engine left in
//! by `--only` is calibrated, their runs are interleaved so that machine
//! noise hits all alike, and each prints one JSON line with its median.
//! An engine left out by `--only` is not run at all, so that a profile of
//! another one holds nothing else.

use std::time::Duration;

use crate::timing::{calibrate, median, time_run};

/// One engine in a race.
pub struct Engine<'a> {
    /// Its name, as `--only` and the report spell it.
    pub name: &'static str,
    /// Bytes of its output (for the report).
    pub bytes: usize,
    /// One render.
    pub render: &'a mut dyn FnMut(),
}

/// Times `engines` on `template`: `runs` interleaved runs of about
/// `run_time` each, then one JSON line per engine.
pub fn race(
    template: &str,
    runs: usize,
    run_time: Duration,
    only: Option<&str>,
    engines: &mut [Engine<'_>],
) {
    let timed: Vec<bool> = engines
        .iter()
        .map(|engine| only.is_none_or(|only| only == engine.name))
        .collect();
    let iters: Vec<u64> = engines
        .iter_mut()
        .zip(&timed)
        .map(|(engine, timed)| match timed {
            true => calibrate(run_time, &mut *engine.render),
            false => 0,
        })
        .collect();
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(runs); engines.len()];
    for _ in 0..runs {
        for (i, engine) in engines.iter_mut().enumerate() {
            if timed[i] {
                times[i].push(time_run(iters[i], &mut *engine.render));
            }
        }
    }
    for (i, engine) in engines.iter().enumerate() {
        if !timed[i] {
            continue;
        }
        let line = serde_json::json!({
            "engine": engine.name,
            "template": template,
            "median_ns": median(std::mem::take(&mut times[i])).round(),
            "runs": runs,
            "iters": iters[i],
            "bytes": engine.bytes,
        });
        println!("{line}");
    }
}
