//! The timing every side-by-side bench program shares (included by path
//! from `gotmpl/`, `jinja/` and `handlebars/`): calibrate an iteration count
//! for a run of a given length, time a run, take the median of runs.

use std::time::{Duration, Instant};

/// Iterations of `f` that take about `run_time`.
pub fn calibrate(run_time: Duration, mut f: impl FnMut()) -> u64 {
    let mut iters = 1u64;
    loop {
        let start = Instant::now();
        for _ in 0..iters {
            f();
        }
        let elapsed = start.elapsed();
        if elapsed >= run_time / 10 {
            let scaled = iters as f64 * run_time.as_secs_f64() / elapsed.as_secs_f64();
            return (scaled as u64).max(1);
        }
        iters *= 2;
    }
}

/// Nanoseconds per call of `f` over `iters` calls.
pub fn time_run(iters: u64, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    start.elapsed().as_nanos() as f64 / iters as f64
}

/// The median of `values` (the upper one of an even count).
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
