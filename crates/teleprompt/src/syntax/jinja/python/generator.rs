//! Jinja2's generators, in a chat template: `map`, `select`, `reject`,
//! `selectattr` and `rejectattr` yield their items lazily in Jinja2, and
//! what a template does with the result shows it:
//!
//! - `tojson` of one fails (`json.dumps` cannot serialize a generator:
//!   llama.cpp's DeepSeek R1 tool template, `tools | map(attribute=
//!   'function') | tojson`, fails in `transformers`);
//! - it is true in an `if` even when it yields nothing.
//!
//! minijinja's filters return lists; a chat template's are wrapped in a
//! [`Generator`]. A walk, `list`, `join`, `first`, `in`… see the same items
//! as before. Unlike Python's, it is not used up by a walk (teleprompt's
//! filters may walk a value twice, to bound what they build first).

use std::sync::Arc;

use minijinja::value::{Enumerator, Object, ObjectRepr, Value as JValue};

/// The filters whose result is a generator in Jinja2.
pub(in crate::syntax::jinja) const GENERATOR_FILTERS: &[&str] =
    &["map", "select", "reject", "selectattr", "rejectattr"];

/// The items a generator yields.
#[derive(Debug)]
pub(in crate::syntax::jinja) struct Generator {
    items: Vec<JValue>,
}

impl Generator {
    /// `items` as a Jinja2 generator yields them.
    pub(in crate::syntax::jinja) fn wrap(items: JValue) -> Result<JValue, minijinja::Error> {
        let items: Vec<JValue> = items.try_iter()?.collect();
        Ok(JValue::from_object(Generator { items }))
    }
}

impl Object for Generator {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Iterable
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.items.clone())
    }

    /// A `for` loop's `loop.length` and `loop.last`, which Jinja2 also
    /// knows for a generator.
    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.items.len())
    }

    /// A Python generator is always true.
    fn is_true(self: &Arc<Self>) -> bool {
        true
    }
}

/// Whether `value` is a Jinja2 generator.
pub(in crate::syntax::jinja) fn is_generator(value: &JValue) -> bool {
    value.downcast_object_ref::<Generator>().is_some()
}
