//! The data a template reads, as a shape: the keys it reads at each level,
//! and where it walks a list, what it reads of each element. Each syntax
//! finds the paths on its own parse tree; this is the shape they fill and
//! how it prints: as Dotprompt's Picoschema and as JSON Schema, ready to
//! paste into front matter `input.schema`.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

/// One step of a path into the data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A key of a mapping.
    Key(String),
    /// Each element of a list (`range`, `#each`, `for`).
    Each,
}

/// The shape of what a template reads of its data.
///
/// ```
/// use teleprompt::analysis::{Inputs, Step};
///
/// let mut inputs = Inputs::default();
/// inputs.add(&[Step::Key("issue".into()), Step::Key("title".into())]);
/// inputs.add(&[Step::Key("issue".into()), Step::Key("labels".into()), Step::Each]);
/// assert_eq!(
///     inputs.to_picoschema(),
///     serde_json::json!({"issue(object)": {"labels(array)": "any", "title": "any"}})
/// );
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inputs {
    /// Keys read of this value, each with what is read of it.
    fields: BTreeMap<String, Inputs>,
    /// What is read of each element, when the value is walked as a list.
    items: Option<Box<Inputs>>,
    /// True when the template uses the value whole (prints it, passes it
    /// to `toJSON`): it may need keys not listed.
    whole: bool,
    /// Where the template first prints the value as it is (`{{ .issue }}`),
    /// in the template text.
    printed: Option<std::ops::Range<usize>>,
    /// Where the template first reads the value (the span of the path
    /// that reaches it, or of an expression reaching through it), in the
    /// template text: where a warning about the path is placed.
    first: Option<std::ops::Range<usize>>,
}

impl Inputs {
    /// Notes that the template reads `path`.
    pub fn add(&mut self, path: &[Step]) {
        self.node(path);
    }

    /// The node of `path`, made where it is not yet.
    fn node(&mut self, path: &[Step]) -> &mut Inputs {
        let mut node = self;
        for step in path {
            node = node.child(step);
        }
        node
    }

    /// The node one step below this one, made where it is not yet.
    fn child(&mut self, step: &Step) -> &mut Inputs {
        match step {
            Step::Key(key) => self.fields.entry(key.clone()).or_default(),
            Step::Each => self.items.get_or_insert_with(Box::default),
        }
    }

    /// Notes that the template uses the value at `path` whole.
    pub fn add_whole(&mut self, path: &[Step]) {
        self.node(path).whole = true;
    }

    /// Notes that the template reads `path` at `span` of its text (`whole`:
    /// it uses the value whole); each step keeps the first place it is
    /// read at.
    pub(crate) fn add_at(&mut self, path: &[Step], span: std::ops::Range<usize>, whole: bool) {
        let mut node = self;
        for step in path {
            node = node.child(step);
            node.note_first(&span);
        }
        node.whole |= whole;
    }

    fn note_first(&mut self, span: &std::ops::Range<usize>) {
        if self
            .first
            .as_ref()
            .is_none_or(|first| span.start < first.start)
        {
            self.first = Some(span.clone());
        }
    }

    /// Notes that the template prints the value at `path` as it is, at
    /// `span` of its text.
    /// (Where it is first read is noted apart, with the path's own span.)
    pub(crate) fn add_printed(&mut self, path: &[Step], span: std::ops::Range<usize>) {
        let node = self.node(path);
        node.whole = true;
        if node.printed.as_ref().is_none_or(|at| span.start < at.start) {
            node.printed = Some(span);
        }
    }

    /// Moves every span by `place` (from the text parsed to the text
    /// written).
    pub(crate) fn map_spans(&mut self, place: &dyn Fn(usize) -> usize) {
        for span in [&mut self.first, &mut self.printed].into_iter().flatten() {
            *span = place(span.start)..place(span.end);
        }
        for inner in self.fields.values_mut() {
            inner.map_spans(place);
        }
        if let Some(items) = &mut self.items {
            items.map_spans(place);
        }
    }

    /// The keys read of this value, each with what is read of it.
    pub(crate) fn fields(&self) -> impl Iterator<Item = (&str, &Inputs)> {
        self.fields
            .iter()
            .map(|(name, inner)| (name.as_str(), inner))
    }

    /// What is read of each element, when the value is walked as a list.
    pub(crate) fn items(&self) -> Option<&Inputs> {
        self.items.as_deref()
    }

    /// Whether the template prints this value, walks it as a list, or
    /// does either to something below it — more than testing it (`if x`,
    /// `x is defined`, which read it and fail nothing when it is missing).
    pub(crate) fn used(&self) -> bool {
        self.printed.is_some() || self.items.is_some() || self.fields.values().any(Inputs::used)
    }

    /// Where the template first reads this value, if the syntax told.
    pub(crate) fn first(&self) -> Option<&std::ops::Range<usize>> {
        self.first.as_ref()
    }

    /// Values the template prints as they are while it also reads their
    /// keys or walks them as lists, or that `structured` says are mappings
    /// or lists (the declared inputs do): a mapping or list printed whole,
    /// most likely by mistake (Go prints `map[…]`, Handlebars `[object
    /// Object]`, Jinja a Python dict). Each with its path (`issue.labels`),
    /// where it prints, and whether the template reads inside it (else
    /// only `structured` said so).
    pub(crate) fn printed_structures(
        &self,
        structured: &dyn Fn(&[Step]) -> bool,
    ) -> Vec<(String, std::ops::Range<usize>, bool)> {
        let mut found = Vec::new();
        self.collect_printed(&mut Vec::new(), structured, &mut found);
        found.sort_by_key(|(_, span, _)| span.start);
        found
    }

    fn collect_printed(
        &self,
        path: &mut Vec<Step>,
        structured: &dyn Fn(&[Step]) -> bool,
        found: &mut Vec<(String, std::ops::Range<usize>, bool)>,
    ) {
        if let Some(span) = &self.printed {
            let inside = !self.fields.is_empty() || self.items.is_some();
            if inside || structured(path) {
                found.push((dotted(path), span.clone(), inside));
            }
        }
        for (name, inner) in &self.fields {
            path.push(Step::Key(name.clone()));
            inner.collect_printed(path, structured, found);
            path.pop();
        }
        if let Some(items) = &self.items {
            path.push(Step::Each);
            items.collect_printed(path, structured, found);
            path.pop();
        }
    }

    /// The top-level names read.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.fields.keys().map(String::as_str)
    }

    /// True when nothing is read.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.items.is_none() && !self.whole
    }

    /// True when the template uses the whole data (`{{ . }}`, `toJSON .`):
    /// the names listed may not be all it needs.
    pub fn reads_whole(&self) -> bool {
        self.whole
    }

    /// These inputs without the top-level names `drop` says (the prompt
    /// context's namespaces, which are not the host's data).
    pub fn without(mut self, drop: impl Fn(&str) -> bool) -> Inputs {
        self.fields.retain(|name, _| !drop(name));
        self
    }

    /// As Picoschema (`name: any`, `name(object): {…}`, `name(array): …`):
    /// every input `any`, to be given its type by the author.
    pub fn to_picoschema(&self) -> Value {
        Value::Object(self.picoschema_fields())
    }

    fn picoschema_fields(&self) -> Map<String, Value> {
        self.fields
            .iter()
            .map(
                |(name, inner)| match (&inner.items, inner.fields.is_empty()) {
                    (Some(items), _) => (
                        format!("{name}(array)"),
                        if items.fields.is_empty() {
                            json!("any")
                        } else {
                            Value::Object(items.picoschema_fields())
                        },
                    ),
                    (None, false) => (
                        format!("{name}(object)"),
                        Value::Object(inner.picoschema_fields()),
                    ),
                    (None, true) => (name.clone(), json!("any")),
                },
            )
            .collect()
    }

    /// As JSON Schema (draft 2020-12): objects with their properties,
    /// lists with their items, anything else unconstrained.
    pub fn to_json_schema(&self) -> Value {
        let mut schema = self.json_schema_of();
        if let Value::Object(map) = &mut schema {
            map.insert(
                "$schema".into(),
                json!("https://json-schema.org/draft/2020-12/schema"),
            );
        }
        schema
    }

    fn json_schema_of(&self) -> Value {
        if let Some(items) = &self.items {
            return json!({"type": "array", "items": items.json_schema_of()});
        }
        if self.fields.is_empty() {
            return json!({});
        }
        let properties: Map<String, Value> = self
            .fields
            .iter()
            .map(|(name, inner)| (name.clone(), inner.json_schema_of()))
            .collect();
        json!({"type": "object", "properties": properties})
    }
}

/// A path as the warnings write it: keys joined by `.`, a list's
/// elements as `[]` (`issue.labels[].name`).
/// The most keys of a path the analyses follow (data nests no deeper than
/// 127 levels): past it, a syntax's walk reads the path's first keys
/// whole and follows no further, so that a chain of names, each a key
/// further, stays linear.
pub(crate) const MAX_PATH: usize = 64;

pub(crate) fn dotted(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Step::Each => out.push_str("[]"),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> Step {
        Step::Key(name.to_string())
    }

    #[test]
    fn paths_build_one_shape_printed_two_ways() {
        let mut inputs = Inputs::default();
        inputs.add(&[key("issue"), key("title")]);
        inputs.add(&[key("issue"), key("blockers"), Step::Each, key("identifier")]);
        inputs.add(&[key("issue"), key("labels"), Step::Each]);
        inputs.add(&[key("attempt")]);
        let inputs = inputs.without(|name| name == "attempt");
        assert_eq!(
            inputs.to_picoschema(),
            json!({"issue(object)": {
                "blockers(array)": {"identifier": "any"},
                "labels(array)": "any",
                "title": "any",
            }})
        );
        assert_eq!(
            inputs.to_json_schema(),
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {"issue": {"type": "object", "properties": {
                    "blockers": {"type": "array", "items": {"type": "object", "properties": {"identifier": {}}}},
                    "labels": {"type": "array", "items": {}},
                    "title": {},
                }}},
            })
        );
        assert_eq!(inputs.names().collect::<Vec<_>>(), ["issue"]);
        assert!(!inputs.reads_whole());
    }
}
