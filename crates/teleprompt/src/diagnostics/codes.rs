//! Stable codes for every kind of error and warning: `TP0101` is
//! `parse/unknown-filter` in every syntax, in every release. The first two
//! digits are the class (01 parse, 02 document, 03 render, 04 input, 05
//! io, 06 warning), the last two the kind within it (00: the class alone).
//! A code is never reused for another kind; a kind that goes away keeps
//! its code, unused. `teleprompt explain CODE` prints the entry.

/// One kind of problem: its code, its rule id ([`super::Error::rule`]), a
/// title, and what it means and how to fix it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Code {
    /// `TP0101`.
    pub code: &'static str,
    /// `parse/unknown-filter`.
    pub rule: &'static str,
    /// One line: what is wrong.
    pub title: &'static str,
    /// A paragraph: when it happens, and what to do.
    pub explanation: &'static str,
}

macro_rules! codes {
    ($($code:literal $rule:literal $title:literal $explanation:literal;)*) => {
        /// Every code, in order.
        pub const CODES: &[Code] = &[
            $(Code { code: $code, rule: $rule, title: $title, explanation: $explanation },)*
        ];
    };
}

codes! {
    "TP0100" "parse" "The template does not parse"
        "The template's syntax is wrong: an unclosed tag or block, an unknown statement, a \
         stray closing tag. The report points at the place; fix the syntax there.";
    "TP0101" "parse/unknown-filter" "A filter that does not exist"
        "The template applies a filter no syntax, prompt or host defines (`{{ name | uper }}`). \
         The report suggests the closest name that exists. Register host filters before \
         loading, or fix the spelling.";
    "TP0102" "parse/unknown-test" "A test that does not exist"
        "A Jinja `is` test no one defines (`{% if x is nmber %}`). Fix the spelling; the \
         report suggests the closest test.";
    "TP0103" "parse/unknown-function" "A function that does not exist"
        "The template calls a function that is not built in, not a macro and not a host \
         function. Fix the spelling or register the function.";
    "TP0104" "parse/unknown-helper" "A Handlebars helper that does not exist"
        "A Handlebars block or call names a helper no one defines. Fix the spelling or \
         register the helper.";
    "TP0105" "parse/wrong-arity" "A call with a number of arguments it cannot take"
        "A Go function, Handlebars helper or Jinja built-in filter, test or function is \
         given too many or too few arguments, or a keyword it does not take \
         (`{{ x | upper(1) }}`). Give it the arguments its documentation lists.";
    "TP0106" "parse/wrong-type" "A literal argument of a type the call refuses"
        "A literal (string, number, boolean, null) passed where the call would fail at \
         render (`{{ lower 5 }}`). Pass a value of the type the report names.";
    "TP0107" "parse/role-not-literal" "A role chosen by data"
        "A role marker whose name is not a literal of the template (`{{ role(who) }}`): \
         data must not choose who speaks, or it could open a system message. Choose \
         between literal roles with `if`.";
    "TP0108" "parse/unresolved-include" "An include, import, partial or template that does not resolve"
        "A Jinja `include`/`import`/`extends`, a Go `template \"name\"` or a Handlebars \
         partial names a file or template that is not there, or outside the include root. \
         Check the name and `--include-root`.";
    "TP0109" "parse/duplicate-template" "A Go template defined twice"
        "A Go template name is defined twice in one file, or in two other files the prompt \
         uses. Rename one of them.";
    "TP0110" "parse/include-cycle" "Templates that include themselves"
        "Jinja templates include, import or extend themselves, directly or through others, \
         or files include one another deeper than the call depth limit. Break the cycle.";
    "TP0111" "parse/without-context" "An included template reads names it cannot see"
        "A Jinja template imported or included without context reads the caller's names, \
         or an included template reads its includer's `loop`. Pass the values explicitly, \
         or include with context.";
    "TP0112" "parse/unscoped-block" "A block reads a loop variable without `scoped`"
        "A Jinja block inside a loop or `with` reads its variables but is not declared \
         `scoped`, so it would see nothing. Add `scoped` to the block.";
    "TP0113" "parse/block-cycle" "A block that renders itself"
        "A Jinja block renders itself through `self.name()`. Remove the self-call.";
    "TP0114" "parse/above-root" "Handlebars `../` above the outermost context"
        "A Handlebars path climbs with `../` past the root data. Remove a `../`.";
    "TP0115" "parse/too-many-errors" "More errors than a report shows"
        "A file has more errors than the first 100 a report lists; this note counts the \
         rest. Fix the first ones and check again.";
    "TP0116" "parse/constant-too-large" "A constant expression too large to build"
        "A constant expression (`\"x\" * 100000000`) would build a text or list larger \
         than the limits allow, at load. Make it smaller.";
    "TP0200" "document" "The prompt file is not a valid document"
        "The file cannot be read as a prompt: not UTF-8, an unknown syntax, a malformed \
         configuration (a tokenizer config, a Semantic Kernel or Prompty file).";
    "TP0201" "document/front-matter" "Front matter that is not valid"
        "The YAML front matter between the `---` lines is not YAML, not a mapping, or not \
         closed. Fix the YAML; the report gives its line.";
    "TP0202" "document/front-matter-key" "A front matter key teleprompt does not read, or a bad value"
        "A misspelled front matter key (the report suggests the closest one) or a value of \
         the wrong kind for a key teleprompt reads.";
    "TP0203" "document/duplicate-name" "Two prompts with one name"
        "Two prompts of one library (a folder) have the same name. Rename one (front \
         matter `name:`), or move it.";
    "TP0300" "render" "The render failed"
        "The template failed while it rendered: a missing value under strict rules, a value \
         of the wrong kind, a limit reached (output size, steps, nesting), a helper's error. \
         The report names the place, the data path and the closest name.";
    "TP0301" "render/timeout" "The render ran past its deadline"
        "The host stopped a render that took longer than it allows \
         (`RenderOptions::with_deadline`, `serve --render-timeout`, `batch --row-timeout`).";
    "TP0302" "render/cancelled" "The render was cancelled"
        "The host stopped the render with its `CancelToken`.";
    "TP0303" "render/unknown-filter" "A chat template reached a filter that does not exist"
        "A chat template uses a filter no one defines; as in transformers, it is an error \
         only in a render that reaches it (the load warns, TP0608).";
    "TP0304" "render/unknown-test" "A chat template reached a test that does not exist"
        "As TP0303, for a Jinja test (the load warns, TP0609).";
    "TP0305" "render/unknown-function" "A chat template reached a function that does not exist"
        "As TP0303, for a function (the load warns, TP0610).";
    "TP0306" "render/over-budget" "A turn that does not fit its token budget"
        "The prompt's `budget:` cannot be met even after cutting what it may cut (the \
         history, optional sections). The report gives the numbers: raise the total or \
         mark more sections as optional.";
    "TP0307" "render/internal" "A render that stopped on an internal fault"
        "A render panicked inside teleprompt (a bug: please report it with the prompt and \
         data); `teleprompt batch` reports it as this row's error and goes on.";
    "TP0400" "input" "The data, history or context is not valid"
        "A data file that does not parse (with its line and column), data that is not a \
         mapping, a history that is not a list of messages, a value a schema refuses.";
    "TP0401" "input/undeclared-input" "The template reads a path the input schema leaves out"
        "At `strict` or `semi`, a closed `input.schema` does not list a path the template \
         prints or walks. Declare it in the schema, or stop reading it.";
    "TP0402" "input/json" "A line of a batch input that is not JSON"
        "A line of `teleprompt batch`'s input does not parse as JSON (or nests deeper than \
         127 levels). The error line gives its line and column; the run goes on.";
    "TP0403" "input/too-long" "A line of a batch input longer than its limit"
        "A line of `teleprompt batch`'s input is longer than `--max-data-bytes`; the run \
         goes on without it.";
    "TP0404" "input/not-utf8" "A line of a batch input that is not UTF-8"
        "A line of `teleprompt batch`'s input holds a byte that is not UTF-8 text; the \
         run goes on without it.";
    "TP0405" "input/not-object" "A line of a batch input that is not a JSON object"
        "Each line of `teleprompt batch`'s input is the data of one render, a JSON object \
         (or a record with `--rows-are records`).";
    "TP0500" "io" "A file or stream cannot be read or written"
        "A path that does not exist or cannot be read, a file over its size limit, a \
         folder with no prompts, output that cannot be written.";
    "TP0501" "io/not-found" "A file that does not exist"
        "A prompt or data file named on the command line or by the host is not there. \
         Check the path (relative paths start at the current folder). Python raises \
         `MissingFileError`, a `FileNotFoundError`.";
    "TP0502" "io/permission-denied" "A file that may not be read"
        "The operating system refuses to open the file for reading. Python raises \
         `FilePermissionError`, a `PermissionError`.";
    "TP0600" "warning" "A warning"
        "Something that renders, but probably not as meant. `check --deny-warnings` fails \
         on warnings.";
    "TP0601" "warning/range-scope" "A root name read inside a Go range or with, where dot is the element"
        "Inside `range` or `with`, dot is the element, not the root: `{{ .name }}` reads the \
         element's `name`. Read the root with `$.name`.";
    "TP0602" "warning/printed-structure" "A mapping or list printed as it is where its keys are read too"
        "The template prints a whole mapping or list and also reads its keys: the print \
         was likely meant to be a field. Print the field, or `tojson`/`toJSON` the value.";
    "TP0603" "warning/empty-message" "A role marker with nothing after it but another marker"
        "A role marker is followed by nothing before the next one: its message is dropped.";
    "TP0604" "warning/no-message" "An empty template: the prompt renders nothing"
        "The template has no text and no marker: every render is empty.";
    "TP0605" "warning/text-after-history" "Text right after history() with no role of its own"
        "Text follows the history with no role marker before it, so it has no message of \
         its own. Open a role first (`{{ role(\"user\") }}`).";
    "TP0606" "warning/undeclared-input" "A path the input schema does not list"
        "The template reads a path its `input.schema` does not declare.";
    "TP0607" "warning/unused-input" "An input the template never reads"
        "The `input.schema` declares a value the template does not read.";
    "TP0608" "warning/unknown-filter" "A chat template names a filter that does not exist"
        "A chat template names an unknown filter: an error only in a render that reaches \
         it (TP0303), as in transformers.";
    "TP0609" "warning/unknown-test" "A chat template names a test that does not exist"
        "As TP0608, for a test (TP0304 where reached).";
    "TP0610" "warning/unknown-function" "A chat template names a function that does not exist"
        "As TP0608, for a function (TP0305 where reached).";
    "TP0611" "warning/too-many-warnings" "More warnings than a report shows"
        "A file has more warnings than the first 100 a report lists; this note counts the \
         rest.";
    "TP0612" "warning/double-bos" "The beginning-of-sequence token twice"
        "A chat template prints its BOS token and its tokenizer adds it again: the model \
         sees two. Leave one out (`add_special_tokens=False`, or drop it from the template).";
    "TP0613" "warning/per-turn-prefix" "The start of the prompt changes every turn"
        "Rendered at two clocks and two turns, the prompt's start differs: a provider's \
         prompt cache cannot keep it. Move per-turn values (time, turn number) later.";
    "TP0614" "warning/not-append-only" "A chat template rewrites earlier turns"
        "Rendering one more turn changes text before it, so a server's prefix cache is \
         lost at every turn.";
}

/// The entry of a code (`TP0101`, any case) or of a rule id
/// (`parse/unknown-filter`).
pub fn explain(name: &str) -> Option<&'static Code> {
    let name = name.trim();
    CODES
        .iter()
        .find(|entry| entry.code.eq_ignore_ascii_case(name) || entry.rule == name)
}

/// The code of a rule id; a rule without its own code has its class's.
pub(crate) fn code_of(rule: &str) -> &'static str {
    let class = rule.split('/').next().unwrap_or(rule);
    CODES
        .iter()
        .find(|entry| entry.rule == rule)
        .or_else(|| CODES.iter().find(|entry| entry.rule == class))
        .map_or("TP0000", |entry| entry.code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_ordered_and_name_their_class() {
        let mut seen = HashSet::new();
        for entry in CODES {
            assert!(seen.insert(entry.code), "{} twice", entry.code);
            assert!(seen.insert(entry.rule), "{} twice", entry.rule);
            let class = match &entry.code[2..4] {
                "01" => "parse",
                "02" => "document",
                "03" => "render",
                "04" => "input",
                "05" => "io",
                "06" => "warning",
                other => panic!("class {other} of {}", entry.code),
            };
            assert_eq!(entry.rule.split('/').next(), Some(class), "{}", entry.code);
            assert_eq!(entry.code.len(), 6);
            assert!(!entry.title.is_empty() && entry.explanation.ends_with('.'));
        }
        let codes: Vec<&str> = CODES.iter().map(|entry| entry.code).collect();
        let mut sorted = codes.clone();
        sorted.sort_unstable();
        assert_eq!(codes, sorted);
    }

    /// docs/errors.md lists every code (where the repository is there: a
    /// packaged crate has no docs folder).
    #[test]
    fn the_docs_list_every_code() {
        let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/errors.md");
        let Ok(text) = std::fs::read_to_string(docs) else {
            eprintln!("note: {docs} is not there; not compared");
            return;
        };
        for entry in CODES {
            let row = format!("| `{}` | `{}` | {} |", entry.code, entry.rule, entry.title);
            assert!(text.contains(&row), "docs/errors.md lacks {row}");
        }
    }

    #[test]
    fn rules_and_codes_find_each_other() {
        assert_eq!(code_of("parse/unknown-filter"), "TP0101");
        assert_eq!(code_of("parse/not-a-kind-yet"), "TP0100");
        assert_eq!(code_of("io"), "TP0500");
        assert_eq!(
            explain("tp0101").map(|entry| entry.rule),
            Some("parse/unknown-filter")
        );
        assert_eq!(
            explain("render/timeout").map(|entry| entry.code),
            Some("TP0301")
        );
        assert!(explain("TP9999").is_none());
    }
}
