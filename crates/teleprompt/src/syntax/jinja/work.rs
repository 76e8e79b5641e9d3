//! Work counted on Jinja's fuel-free path, and the host's stop where
//! minijinja gives no other hook.
//!
//! A template without fuel (see `fuel`) runs each instruction at most
//! once per item of the data it walks, but one instruction may walk a
//! whole collection or text: `xs|sum` inside `for x in xs` is quadratic.
//! teleprompt's collection filters (`filters.rs`), Python's methods
//! (`growth.rs`) and the data's trees (each text read, `value.rs`:
//! `==` and `in` are minijinja's own, and compare what was read) charge
//! what they walk, as the engine's
//! `tick_work` does on the direct path: one step per item, and per 64
//! bytes of text ([`BYTES_PER_STEP`]), against `max_steps`. `length` and
//! `count` of a list are one step (the list knows its length); of a text,
//! its bytes. With fuel, minijinja charges its own way too.
//!
//! `range` asks whether the host stopped the render ([`current::stopped`]):
//! nested loops over ranges print nothing, call nothing of teleprompt's
//! and read no data, so without it a render with a large `max_steps`
//! could not be stopped by its deadline.

use minijinja::{Environment, Error, Value as JValue};

use super::current;
use crate::scope::BYTES_PER_STEP;

/// Registers `range`, which looks at the host's stop.
pub(super) fn register(env: &mut Environment<'static>) {
    env.add_function(
        "range",
        |lower: isize, upper: Option<isize>, step: Option<isize>| -> Result<JValue, Error> {
            if let Some(over) = current::stopped_now() {
                return Err(current::exceeded(over));
            }
            minijinja::functions::range(lower, upper, step)
        },
    );
}

/// Charges the work of the collection filter `name` on `input`: its
/// items, or its text's bytes.
pub(super) fn charge_filter(name: &str, input: Option<&JValue>) -> Result<(), Error> {
    let Some(input) = input else {
        return Ok(());
    };
    let text = input.as_str().map_or(0, str::len);
    let items = match name {
        // The ends of a list or a text are at hand.
        "first" | "last" => return Ok(()),
        // A list's length is known; a text's characters are counted.
        "length" | "count" => 0,
        _ if text > 0 => 0,
        _ => input.len().unwrap_or(0),
    };
    charge(items, text)
}

/// Charges `items` walked and `bytes` of text read.
pub(super) fn charge(items: usize, bytes: usize) -> Result<(), Error> {
    let steps = items.saturating_add(bytes / BYTES_PER_STEP);
    current::work(steps).map_err(current::exceeded)
}
