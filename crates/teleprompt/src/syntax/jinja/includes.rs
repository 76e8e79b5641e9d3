//! Other templates a Jinja prompt names: `{% include %}`, `{% import %}`,
//! `{% from … import %}` and `{% extends %}` of files of the include root
//! (see [`crate::document::include_root`]), all read when the prompt loads.
//! pongo2's `include`, `extends`, `import` and `ssi … parsed` (the Django
//! dialect) come here translated into these tags: each file is translated
//! as it is read (`Unit::translation`), its spans map back through that,
//! an import takes only the macros marked `export`, and `include … only`
//! gives the template only the names it lists (`Unit::only`; the others
//! it reads are set to nothing around it).
//!
//! A name is a relative path (`/` between folders), looked for from the
//! include root first (as Jinja2's `FileSystemLoader` reads every name
//! from its search path), then from the folder of the template that names
//! it; the first file that exists is read, and no extension is added. Each
//! file read is checked as the body is (unknown filters and functions,
//! argument counts, …) and registered in the environment under its path
//! from the root; at render, a name is joined to what it resolved to at
//! load, so nothing is looked up then.
//!
//! Names are written out: a string, a list of strings (`include`: the
//! first that exists), or `"a" if x else "b"` (both are read). A computed
//! name, a missing file (unless `ignore missing`), a cycle (`a.j2 → b.j2 →
//! a.j2`), more than [`MAX_FILES`] files and `extends` chains of more than
//! [`MAX_EXTENDS`] templates are load errors at the tag.
//!
//! Where minijinja renders otherwise than Jinja2, the prompt is refused
//! rather than rendered differently, or rewritten to render as Jinja2:
//! - minijinja gives every import and include the caller's context, where
//!   Jinja2 gives an import one only when it says `with context` (and an
//!   include unless it says `without context`): a template used without
//!   context that reads a name it does not set itself is a load error
//!   (Jinja2 would find it undefined);
//! - minijinja passes the caller's `loop` to an included template, Jinja2
//!   does not: an included template reading `loop` outside its own loops
//!   is a load error;
//! - minijinja renders an include in the caller's frame, so what it sets
//!   would leak into the caller: each include statement is wrapped in a
//!   `{% with %}` of its own (`scope_includes`).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::ops::Range;
use std::path::PathBuf;

use minijinja::machinery::ast;

use super::TEMPLATE_NAME;
use crate::analysis::Inputs;
use crate::diagnostics::{closest, Error, Findings, TemplateError, MAX_ERRORS_PER_FILE};
use crate::document::include_root::{too_deep, Includes, MAX_FILES};
use crate::document::Document;
use crate::syntax::edits::{Edit, Edited};

/// A tag that names another template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tag {
    Include,
    Import,
    FromImport,
    Extends,
}

impl Tag {
    /// The tag's word, as written.
    pub(super) fn word(self) -> &'static str {
        match self {
            Tag::Include => "include",
            Tag::Import | Tag::FromImport => "import",
            Tag::Extends => "extends",
        }
    }

    /// What the tag does to a template, for messages.
    fn verb(self) -> &'static str {
        match self {
            Tag::Include => "include",
            Tag::Import | Tag::FromImport => "import",
            Tag::Extends => "extend",
        }
    }
}

/// A tag naming another template, as the template writes it.
#[derive(Clone, Debug)]
pub(super) struct Ref {
    pub tag: Tag,
    /// `include … ignore missing`.
    pub ignore_missing: bool,
    /// The templates the tag may use: one choice per template that may
    /// render (`"a" if x else "b"` has two), each a list of names of which
    /// the first that exists is used (`include ["a.j2", "b.j2"]`). `None`
    /// for a computed name.
    pub choices: Option<Vec<Vec<String>>>,
    /// The name expression in the text.
    pub span: Range<usize>,
    /// Where the tag's statement ends (before `%}`): a context marker
    /// stands between the name and here.
    pub end: usize,
    /// `from … import a, b as c`: the names imported, with where.
    pub imported: Vec<(String, Range<usize>)>,
}

/// The names a tag's name expression may give: see [`Ref::choices`].
pub(super) fn choices(name: &ast::Expr<'_>) -> Option<Vec<Vec<String>>> {
    let literal = |expr: &ast::Expr<'_>| match expr {
        ast::Expr::Const(c) => c.value.as_str().map(str::to_string),
        _ => None,
    };
    match name {
        ast::Expr::Const(_) => Some(vec![vec![literal(name)?]]),
        ast::Expr::List(list) => Some(vec![list
            .items
            .iter()
            .map(literal)
            .collect::<Option<Vec<_>>>()?]),
        ast::Expr::Tuple(tuple) => Some(vec![tuple
            .items
            .iter()
            .map(literal)
            .collect::<Option<Vec<_>>>()?]),
        ast::Expr::IfExpr(choice) => {
            let mut both = choices(&choice.true_expr)?;
            both.extend(choices(choice.false_expr.as_ref()?)?);
            Some(both)
        }
        _ => None,
    }
}

/// What the load-time walk found in one template's text.
#[derive(Debug, Default)]
pub(super) struct Scanned {
    /// The bound checks (and pongo2 autoescape spellings) to make.
    pub edits: Vec<Edit>,
    /// Every name read anywhere.
    pub reads: BTreeSet<String>,
    /// The names read that the template never binds and that are no
    /// functions: what it needs from its context.
    pub free: BTreeSet<String>,
    /// The names it binds anywhere.
    pub locals: BTreeSet<String>,
    /// What an import of it gets: its top-level macros and variables.
    pub exports: BTreeSet<String>,
    /// The tags naming other templates.
    pub refs: Vec<Ref>,
    /// What it reads of its data, on its own.
    pub inputs: Inputs,
    /// `self.name()` calls: from the block around, to the block, where.
    pub block_calls: Vec<(String, String, Range<usize>)>,
    /// The first read of `loop` outside the template's own loops.
    pub loose_loop: Option<Range<usize>>,
}

/// The edits that give each `include` statement (`includes`: from its
/// keyword to before `%}`) of `text` a scope of its own: `{% include "x" %}`
/// becomes `{% with %}{% include "x" %}{% endwith %}`, so that what the
/// included template sets does not leak into the caller (Jinja2 renders
/// it in a context of its own; minijinja in the caller's frame). The
/// whitespace marks of the tag (`{%-`, `-%}`, `+`) move to the outer
/// tags, so the text around trims as it did.
pub(super) fn scope_includes(text: &str, includes: &[Range<usize>]) -> Vec<Edit> {
    let mut edits = Vec::new();
    for statement in includes {
        let Some(before) = text.get(..statement.start) else {
            continue;
        };
        let Some(open) = before.rfind("{%") else {
            continue;
        };
        let left = before.get(open + 2..).unwrap_or_default();
        let left_mark = match left.chars().next() {
            Some(mark @ ('-' | '+')) => mark.to_string(),
            _ => String::new(),
        };
        if !left.trim_start_matches(['-', '+']).trim().is_empty() {
            continue;
        }
        let Some(after) = text.get(statement.end..) else {
            continue;
        };
        let Some(close) = after.find("%}") else {
            continue;
        };
        let right = after.get(..close).unwrap_or_default();
        let right_mark = match right.trim_end().chars().last() {
            Some(mark @ ('-' | '+')) => mark.to_string(),
            _ => String::new(),
        };
        if !right.trim_end_matches(['-', '+']).trim().is_empty() {
            continue;
        }
        edits.push(Edit {
            original: open..statement.start,
            replacement: format!("{{%{left_mark} with %}}{{% "),
        });
        edits.push(Edit {
            original: statement.end..statement.end + close + 2,
            replacement: format!(" %}}{{% endwith {right_mark}%}}"),
        });
    }
    edits
}

/// Blocks that render themselves through `self.name()`, directly or
/// through other blocks (`calls`: the template, the block calling, the
/// block called, where): each cycle as the call closing it (an index of
/// `calls`) and the chain of blocks. minijinja gives such a render a
/// native stack frame per level, far more than its depth limit allows.
pub(super) fn block_cycles(
    calls: &[(usize, &str, &str, Range<usize>)],
) -> Vec<(usize, Vec<String>)> {
    let mut names: Vec<&str> = calls
        .iter()
        .flat_map(|(_, from, to, _)| [*from, *to])
        .collect();
    names.sort_unstable();
    names.dedup();
    let node = |name: &str| names.binary_search(&name).ok();
    // Each block's calls: (index in `calls`, block called).
    let mut out: Vec<Vec<(usize, usize)>> = vec![Vec::new(); names.len()];
    for (index, (_, from, to, _)) in calls.iter().enumerate() {
        if let (Some(from), Some(to)) = (node(from), node(to)) {
            if let Some(list) = out.get_mut(from) {
                list.push((index, to));
            }
        }
    }
    let mut state = vec![0u8; names.len()];
    let mut cycles = Vec::new();
    for start in 0..names.len() {
        if state.get(start) != Some(&0) {
            continue;
        }
        // (block, next call to follow)
        let mut stack = vec![(start, 0usize)];
        if let Some(slot) = state.get_mut(start) {
            *slot = 1;
        }
        while let Some(&(block, next)) = stack.last() {
            let Some(&(call, to)) = out.get(block).and_then(|list| list.get(next)) else {
                if let Some(slot) = state.get_mut(block) {
                    *slot = 2;
                }
                stack.pop();
                continue;
            };
            if let Some(top) = stack.last_mut() {
                top.1 += 1;
            }
            match state.get(to) {
                Some(0) => {
                    if let Some(slot) = state.get_mut(to) {
                        *slot = 1;
                    }
                    stack.push((to, 0));
                }
                Some(1) if cycles.len() >= MAX_ERRORS_PER_FILE => {}
                Some(1) => {
                    let from = stack.iter().position(|(open, _)| *open == to).unwrap_or(0);
                    let mut chain: Vec<String> = stack
                        .get(from..)
                        .unwrap_or_default()
                        .iter()
                        .filter_map(|(open, _)| names.get(*open).map(|name| name.to_string()))
                        .collect();
                    chain.extend(names.get(to).map(|name| name.to_string()));
                    cycles.push((call, chain));
                }
                _ => {}
            }
        }
    }
    cycles
}

/// The error of a block rendering itself (`chain`: the blocks).
pub(super) fn block_cycle_error(span: Range<usize>, chain: &[String]) -> TemplateError {
    let first = chain.first().map_or("", String::as_str);
    TemplateError::parse(
        Some(span),
        format!(
            "block \"{first}\" renders itself ({}): a block cannot render itself, directly or through other blocks",
            chain.join(" → ")
        ),
    )
    .with_kind("block-cycle")
    .suggest(Some(
        "repeat text with a macro (a macro may call itself) or a loop".to_string(),
    ))
}

/// The names an import of `template` gets: macros, `set` variables and
/// imports at its top level (inside a top-level `if` too), except private
/// ones (`_name`).
pub(super) fn exports(template: &ast::Stmt<'_>) -> BTreeSet<String> {
    fn target(expr: &ast::Expr<'_>, out: &mut BTreeSet<String>) {
        match expr {
            ast::Expr::Var(var) => {
                out.insert(var.id.to_string());
            }
            ast::Expr::List(list) => list.items.iter().for_each(|item| target(item, out)),
            ast::Expr::Tuple(tuple) => tuple.items.iter().for_each(|item| target(item, out)),
            _ => {}
        }
    }
    fn walk(stmts: &[ast::Stmt<'_>], out: &mut BTreeSet<String>) {
        for stmt in stmts {
            match stmt {
                ast::Stmt::Macro(m) => {
                    out.insert(m.name.to_string());
                }
                ast::Stmt::Set(s) => target(&s.target, out),
                ast::Stmt::SetBlock(s) => target(&s.target, out),
                ast::Stmt::Import(i) => target(&i.name, out),
                ast::Stmt::FromImport(i) => {
                    for (name, alias) in &i.names {
                        target(alias.as_ref().unwrap_or(name), out);
                    }
                }
                ast::Stmt::IfCond(i) => {
                    walk(&i.true_body, out);
                    walk(&i.false_body, out);
                }
                _ => {}
            }
        }
    }
    let mut out = BTreeSet::new();
    if let ast::Stmt::Template(t) = template {
        walk(&t.children, &mut out);
    }
    out.retain(|name| !name.starts_with('_'));
    out
}

/// Where a file is first named: by which template (0: the body), at
/// which span of that template's text.
#[derive(Clone, Debug)]
pub(super) struct Site {
    pub includer: usize,
    pub span: Range<usize>,
    /// How many templates deep it is first named (1: by the body).
    pub depth: usize,
}

/// A tag of a template, resolved.
#[derive(Clone, Debug)]
pub(super) struct Link {
    pub tag: Ref,
    /// Whether the template it names sees the caller's variables.
    pub with_context: bool,
    /// The templates it may use (indexes of [`Files::units`]).
    pub targets: Vec<usize>,
}

/// One template of the prompt: the body (index 0) or a file.
#[derive(Debug)]
pub(super) struct Unit {
    /// Its name in the environment.
    pub key: String,
    /// The file; `None` for the body (whose errors the caller places).
    pub document: Option<Document>,
    /// Where its own names resolve.
    pub includes: Includes,
    /// Where it is first named.
    pub site: Option<Site>,
    /// What the load-time walk found; `None` when it does not compile
    /// (its errors are noted).
    pub scanned: Option<Scanned>,
    pub links: Vec<Link>,
    /// The text compiled (bound checks made), to place render errors on
    /// the file as written.
    pub source: Edited,
    /// The dialect's rewrite of its text (pongo2's into Jinja; nothing
    /// for Jinja): what was scanned, and where the spans of its links lie.
    pub translation: Edited,
    /// pongo2's `include … only`: where the name starts (as written) and
    /// the names the include gives.
    pub only: Vec<(usize, BTreeSet<String>)>,
}

/// The body and every file it reads.
#[derive(Debug, Default)]
pub(super) struct Files {
    pub units: Vec<Unit>,
    /// (template, name as written) → the template it resolved to.
    pub joins: HashMap<(String, String), String>,
    /// Each list of paths looked for: the file found, or why none.
    looked_up: HashMap<Vec<PathBuf>, Result<Option<PathBuf>, String>>,
    /// Whether the templates are pongo2's (an import takes the macros
    /// marked `export`; `include … only` gives the values it names).
    pongo2: bool,
    /// The deepest a file may be named (`max_call_depth`).
    max_depth: usize,
}

/// The most names [`Files::needs`] keeps for one template: enough to say
/// what it reads, bounded however many a file names.
const MAX_NEEDS: usize = 256;

/// The most templates one chain of `extends` may hold (the prompt's
/// included): each level's `super()` nests a render a level deeper.
pub(super) const MAX_EXTENDS: usize = 32;

/// A file's text as the load reads it: rewritten by its dialect, then
/// checked.
#[derive(Debug)]
pub(super) struct Prepared {
    /// The dialect's rewrite (nothing for Jinja); spans of `scanned` and
    /// `found` are in its text.
    pub translation: Edited,
    /// See [`Unit::only`].
    pub only: Vec<(usize, BTreeSet<String>)>,
    pub scanned: Scanned,
    pub found: Findings,
}

/// Rewrites and checks a file's text (read through the `Includes` of that
/// file): what it found, or the error that stops it, placed in the text as
/// written.
pub(super) type Scan<'s> = dyn Fn(&str, &Includes) -> Result<Prepared, TemplateError> + 's;

/// The body as the load reads it: its dialect's rewrite and pongo2's
/// `include … only` (see [`Unit`]).
#[derive(Debug, Default)]
pub(super) struct Body {
    pub translation: Edited,
    pub only: Vec<(usize, BTreeSet<String>)>,
    pub pongo2: bool,
}

/// Reads every file the body (`text`, walked into `scanned`) names, and
/// the files those name, from `includes`; notes their problems in
/// `found`. Fails only past [`MAX_FILES`] files, or where files name one
/// another more than `max_depth` deep (no render could get that deep: the
/// bound stops the load before a chain of files makes it quadratic).
pub(super) fn load(
    text: &str,
    scanned: Scanned,
    includes: &Includes,
    scan: &Scan<'_>,
    found: &mut Findings,
    body: Body,
    max_depth: usize,
) -> Result<Files, TemplateError> {
    let mut files = Files {
        units: vec![Unit {
            key: TEMPLATE_NAME.to_string(),
            document: None,
            includes: includes.clone(),
            site: None,
            scanned: Some(scanned),
            links: Vec::new(),
            source: Edited::default(),
            translation: body.translation,
            only: body.only,
        }],
        joins: HashMap::new(),
        looked_up: HashMap::new(),
        pongo2: body.pongo2,
        max_depth,
    };
    let mut by_path: HashMap<PathBuf, usize> = HashMap::new();
    if let Some(body) = includes.file() {
        by_path.insert(body.to_path_buf(), 0);
    }
    let mut queue = VecDeque::from([0]);
    while let Some(index) = queue.pop_front() {
        let refs = files
            .units
            .get(index)
            .and_then(|unit| unit.scanned.as_ref())
            .map(|scanned| scanned.refs.clone())
            .unwrap_or_default();
        for tag in refs {
            let link = files.resolve(index, text, tag, &mut by_path, scan, found, &mut queue)?;
            if let Some(unit) = files.units.get_mut(index) {
                unit.links.push(link);
            }
        }
    }
    let hidden = files.check_links(found);
    files.hide(hidden);
    files.looked_up = HashMap::new();
    Ok(files)
}

impl Files {
    /// The text of template `index` as scanned (`body` for the body).
    fn text<'s>(&'s self, index: usize, body: &'s str) -> &'s str {
        let Some(unit) = self.units.get(index) else {
            return body;
        };
        match &unit.document {
            Some(_) if !unit.translation.is_unchanged() => &unit.translation.text,
            Some(document) => &document.body,
            None => body,
        }
    }

    /// A span of template `index`'s text as scanned, in its text as
    /// written.
    pub(super) fn as_written(&self, index: usize, span: Range<usize>) -> Range<usize> {
        match self.units.get(index) {
            Some(unit) if !unit.translation.is_unchanged() => {
                unit.translation.to_original(span.start)..unit.translation.to_original(span.end)
            }
            _ => span,
        }
    }

    /// The names pongo2's `include … only` of `link` (in template `index`)
    /// gives; `None` for any other tag.
    fn given(&self, index: usize, link: &Link) -> Option<&BTreeSet<String>> {
        let unit = self.units.get(index)?;
        let at = self.as_written(index, link.tag.span.clone()).start;
        unit.only
            .iter()
            .find(|(start, _)| *start == at)
            .map(|(_, names)| names)
    }

    /// The template as messages name it: its path from the root.
    fn shown(&self, index: usize) -> String {
        let Some(unit) = self.units.get(index) else {
            return String::new();
        };
        match unit.includes.file() {
            Some(file) => file.display().to_string(),
            None => unit.key.clone(),
        }
    }

    /// Resolves one tag of template `index`, reading the files it names
    /// that are not read yet.
    #[allow(clippy::too_many_arguments)]
    fn resolve(
        &mut self,
        index: usize,
        body: &str,
        tag: Ref,
        by_path: &mut HashMap<PathBuf, usize>,
        scan: &Scan<'_>,
        found: &mut Findings,
        queue: &mut VecDeque<usize>,
    ) -> Result<Link, TemplateError> {
        let with_context = match tag.tag {
            Tag::Extends => true,
            Tag::Include => context_marker(self.text(index, body), &tag).unwrap_or(true),
            Tag::Import | Tag::FromImport => {
                context_marker(self.text(index, body), &tag).unwrap_or(false)
            }
        };
        let mut link = Link {
            tag,
            with_context,
            targets: Vec::new(),
        };
        let tag = &link.tag;
        let at = |files: &Files, message: String, help: Option<&str>| {
            files.place(
                index,
                TemplateError::parse(Some(tag.span.clone()), message)
                    .with_kind("unresolved-include")
                    .suggest(help.map(str::to_string)),
            )
        };
        let Some(choices) = &tag.choices else {
            found.push(at(
                self,
                format!(
                    "{{% {} %}} of a computed name cannot be resolved: teleprompt reads every template a prompt uses when it loads",
                    tag.tag.word()
                ),
                Some("name the file in quotes, as a list of names (include only), or as \"a.j2\" if … else \"b.j2\""),
            ));
            return Ok(link);
        };
        if tag.tag != Tag::Include && choices.iter().any(|names| names.len() != 1) {
            found.push(at(
                self,
                format!(
                    "{{% {} %}} takes one template name, not a list (only include tries a list)",
                    tag.tag.word()
                ),
                None,
            ));
            return Ok(link);
        }
        let Some(includes) = self.units.get(index).map(|unit| unit.includes.clone()) else {
            return Ok(link);
        };
        let includer = self
            .units
            .get(index)
            .map(|unit| unit.key.clone())
            .unwrap_or_default();
        for names in choices {
            let mut tried: Vec<PathBuf> = Vec::new();
            let mut hit = None;
            let mut failed = false;
            for name in names {
                // Each list of paths is looked for once, however many tags
                // name it.
                let looked_up = &mut self.looked_up;
                let read = includes.jinja_candidates(name).and_then(|candidates| {
                    let read = match looked_up.get(&candidates) {
                        Some(Ok(Some(relative))) => Ok(Some((relative.clone(), None))),
                        Some(Ok(None)) => Ok(None),
                        Some(Err(message)) => Err(message.clone()),
                        None => {
                            let read = includes.read_first(&candidates);
                            let outcome = match &read {
                                Ok(file) => Ok(file.as_ref().map(|(relative, _)| relative.clone())),
                                Err(message) => Err(message.clone()),
                            };
                            looked_up.insert(candidates.clone(), outcome);
                            read.map(|file| file.map(|(relative, file)| (relative, Some(file))))
                        }
                    };
                    read.map(|found| (candidates, found))
                });
                match read {
                    Ok((_, Some((relative, file)))) => {
                        hit = Some((name, relative, file));
                        break;
                    }
                    Ok((candidates, None)) => tried.extend(candidates),
                    Err(message) => {
                        found.push(at(
                            self,
                            format!("cannot {} {name:?}: {message}", tag.tag.verb()),
                            None,
                        ));
                        failed = true;
                        break;
                    }
                }
            }
            let Some((name, relative, file)) = hit else {
                if !failed && !tag.ignore_missing {
                    found.push(at(
                        self,
                        missing(tag.tag, names, &tried),
                        Some("a name is a path from the include root, else from the including template's folder; add `ignore missing` to an include that may have no file"),
                    ));
                }
                continue;
            };
            let known = by_path.get(&relative).copied();
            let target = match (known, file) {
                (Some(target), _) => target,
                // Read before but not kept (past the most files): nothing
                // more to do.
                (None, None) => continue,
                (None, Some(file)) => {
                    if self.units.len() > MAX_FILES {
                        return Err(at(
                            self,
                            format!(
                                "more than {MAX_FILES} template files are used: the most one prompt may read"
                            ),
                            None,
                        ));
                    }
                    let depth = self
                        .units
                        .get(index)
                        .and_then(|unit| unit.site.as_ref())
                        .map_or(0, |site| site.depth)
                        + 1;
                    if depth > self.max_depth {
                        return Err(at(self, too_deep(self.max_depth), None));
                    }
                    let target = self.units.len();
                    let shown = relative.to_string_lossy().replace('\\', "/");
                    let key = if shown == TEMPLATE_NAME {
                        format!("./{shown}")
                    } else {
                        shown
                    };
                    let document = Document::plain(&file.origin, file.text);
                    let site = Site {
                        includer: index,
                        span: self.as_written(index, tag.span.clone()),
                        depth,
                    };
                    let beside = includes.beside(&relative);
                    let prepared = scan(&document.body, &beside);
                    self.units.push(Unit {
                        key,
                        document: Some(document),
                        includes: beside,
                        site: Some(site),
                        scanned: None,
                        links: Vec::new(),
                        source: Edited::default(),
                        translation: Edited::default(),
                        only: Vec::new(),
                    });
                    match prepared {
                        Ok(prepared) => {
                            if let Some(unit) = self.units.get_mut(target) {
                                unit.translation = prepared.translation;
                                unit.only = prepared.only;
                            }
                            self.absorb(target, prepared.found, found);
                            if let Some(unit) = self.units.get_mut(target) {
                                unit.scanned = Some(prepared.scanned);
                            }
                            queue.push_back(target);
                        }
                        Err(error) => found.push(self.place(target, error)),
                    }
                    by_path.insert(relative, target);
                    target
                }
            };
            if let Some(unit) = self.units.get(target) {
                self.joins
                    .insert((includer.clone(), name.clone()), unit.key.clone());
            }
            link.targets.push(target);
        }
        Ok(link)
    }

    /// Notes `problems`, found in template `index`, placed.
    fn absorb(&self, index: usize, problems: Findings, found: &mut Findings) {
        for error in problems.errors {
            found.push(self.place(index, error));
        }
        found.more += problems.more;
    }

    /// `error`, found in the text of template `index`, placed: an error of
    /// the body as it is, one of a file in that file, with where it is
    /// included.
    pub(super) fn place(&self, index: usize, error: TemplateError) -> TemplateError {
        let Some(unit) = self.units.get(index) else {
            return error;
        };
        let error = unit.translation.place(error);
        let Some(document) = unit.document.as_ref() else {
            return error;
        };
        self.with_site(index, document.locate(error))
    }

    /// `located`, an error placed in the file of template `index`, with
    /// where that file is first named.
    pub(super) fn with_site(&self, index: usize, located: Error) -> TemplateError {
        match self.units.get(index).and_then(|unit| unit.site.clone()) {
            Some(site) => self.included_at(located, site.includer, site.span),
            None => TemplateError::elsewhere(located, None),
        }
    }

    /// `located` (an error placed in a file), included by template
    /// `includer` at `span` of its text: labelled `included by FILE:L:C`
    /// for each file on the way from the body, innermost first (where each
    /// was first included), with the place in the body where the chain
    /// starts (the prompt's document labels it).
    pub(super) fn included_at(
        &self,
        located: Error,
        includer: usize,
        span: Range<usize>,
    ) -> TemplateError {
        self.included_through(located, &[(includer, span)])
    }

    /// `located`, reached through the include tags `sites` (template,
    /// span of its text), outermost first: labelled as
    /// [`Files::included_at`] does, from the innermost tag out, then on
    /// from the outermost through where each file was first included.
    pub(super) fn included_through(
        &self,
        located: Error,
        sites: &[(usize, Range<usize>)],
    ) -> TemplateError {
        let Some(((mut includer, mut span), inner)) = sites
            .split_first()
            .map(|(first, inner)| (first.clone(), inner))
        else {
            return TemplateError::elsewhere(located, None);
        };
        let mut labels: Vec<(String, String)> = inner
            .iter()
            .rev()
            .filter_map(|(includer, span)| self.label(*includer, span.start))
            .collect();
        // Each file's first site lies in a template read before it, so
        // this reaches the body; the bound is for safety only.
        for _ in 0..=self.units.len() {
            let Some(label) = self.label(includer, span.start) else {
                return TemplateError::elsewhere(located.with_labels(&labels), Some(span));
            };
            labels.push(label);
            match self.units.get(includer).and_then(|unit| unit.site.clone()) {
                Some(site) => (includer, span) = (site.includer, site.span),
                None => break,
            }
        }
        TemplateError::elsewhere(located.with_labels(&labels), None)
    }

    /// `included by FILE:LINE:COL` for byte `at` of template `index`'s
    /// text; `None` for the body (the prompt's document places it).
    fn label(&self, index: usize, at: usize) -> Option<(String, String)> {
        let document = self.units.get(index)?.document.as_ref()?;
        let here = document.location_of(at);
        Some((
            "included by".to_string(),
            format!("{}:{}:{}", document.origin, here.line, here.column),
        ))
    }

    /// The template registered as `key`.
    pub(super) fn by_key(&self, key: &str) -> Option<usize> {
        self.units.iter().position(|unit| unit.key == key)
    }

    /// Cycles, names imported that the template does not define, and
    /// templates used without context that read names of a context.
    fn check_links(&self, found: &mut Findings) -> Vec<(usize, usize, Vec<String>)> {
        let mut hidden = Vec::new();
        let (order, cycles) = self.walk_order();
        for (index, link, chain) in cycles {
            let Some(tag) = self
                .units
                .get(index)
                .and_then(|unit| unit.links.get(link))
                .map(|link| &link.tag)
            else {
                continue;
            };
            let chain: Vec<String> = chain.iter().map(|&unit| self.shown(unit)).collect();
            found.push(
                self.place(
                    index,
                    TemplateError::parse(
                        Some(tag.span.clone()),
                        format!(
                            "{{% {} %}} makes a cycle: {}",
                            tag.tag.word(),
                            chain.join(" → ")
                        ),
                    )
                    .with_kind("include-cycle")
                    .suggest(Some(
                        "a template cannot include, import or extend itself, even through others; repeat text with a macro or a loop".to_string(),
                    )),
                ),
            );
        }
        let calls: Vec<(usize, &str, &str, Range<usize>)> = self
            .units
            .iter()
            .enumerate()
            .filter_map(|(index, unit)| Some((index, unit.scanned.as_ref()?)))
            .flat_map(|(index, scanned)| {
                scanned
                    .block_calls
                    .iter()
                    .map(move |(from, to, at)| (index, from.as_str(), to.as_str(), at.clone()))
            })
            .collect();
        let edges: std::collections::HashSet<(usize, &str, &str)> = calls
            .iter()
            .map(|(unit, from, to, _)| (*unit, *from, *to))
            .collect();
        for (call, chain) in block_cycles(&calls) {
            // A cycle within one template was found with its other errors.
            let within = |unit: usize| {
                chain.windows(2).all(|pair| match pair {
                    [from, to] => edges.contains(&(unit, from.as_str(), to.as_str())),
                    _ => true,
                })
            };
            let first = chain.first().map_or("", String::as_str);
            let second = chain.get(1).map_or("", String::as_str);
            let mut holders = calls
                .iter()
                .filter(|(_, from, to, _)| *from == first && *to == second)
                .map(|(unit, _, _, _)| *unit);
            if holders.any(within) {
                continue;
            }
            if let Some((index, _, _, span)) = calls.get(call) {
                found.push(self.place(*index, block_cycle_error(span.clone(), &chain)));
            }
        }
        // How many templates each chain of `extends` holds, from each.
        let mut chain = vec![1usize; self.units.len()];
        let mut reported = false;
        for &index in &order {
            let Some(unit) = self.units.get(index) else {
                continue;
            };
            for link in unit
                .links
                .iter()
                .filter(|link| link.tag.tag == Tag::Extends)
            {
                let below = link
                    .targets
                    .iter()
                    .filter_map(|&target| chain.get(target))
                    .max()
                    .copied()
                    .unwrap_or(0);
                let length = below.saturating_add(1).min(MAX_EXTENDS + 1);
                if length > MAX_EXTENDS && !reported {
                    reported = true;
                    found.push(self.place(
                        index,
                        TemplateError::parse(
                            Some(link.tag.span.clone()),
                            format!(
                                "templates extend each other more than {MAX_EXTENDS} deep from here: the most one chain of `extends` may hold"
                            ),
                        )
                        .with_kind("unresolved-include"),
                    ));
                }
                if let Some(slot) = chain.get_mut(index) {
                    *slot = (*slot).max(length);
                }
            }
        }
        let needs = self.needs(&order);
        let mut loose = std::collections::HashSet::new();
        for (index, unit) in self.units.iter().enumerate() {
            for link in &unit.links {
                for &target in &link.targets {
                    if !link.with_context {
                        if let Some(Some(names)) = needs.get(target) {
                            let given = self.given(index, link);
                            let names: BTreeSet<String> = names
                                .iter()
                                .filter(|name| given.is_none_or(|given| !given.contains(*name)))
                                .cloned()
                                .collect();
                            if given.is_some() {
                                // pongo2's `include … only`: the names it
                                // does not give are nil in the template.
                                let names = names.into_iter().filter(|name| name != "loop");
                                hidden.push((index, link.tag.span.start, names.collect()));
                            } else if !names.is_empty() {
                                let error = self.without_context(link, target, &names, given);
                                found.push(self.place(index, error));
                            }
                        }
                    }
                    if link.tag.tag == Tag::FromImport {
                        self.check_imported(index, link, target, found);
                    }
                    if link.tag.tag != Tag::Extends && loose.insert(target) {
                        self.check_loose_loop(target, found);
                    }
                }
            }
        }
        hidden
    }

    /// pongo2's `include … only`: each name the included template reads
    /// and the tag does not give (`hidden`: template, where the tag's name
    /// starts, the names) is set to nothing around the include, in the
    /// `{% with %}` that scopes it (`scope_includes`), so that the
    /// template does not see the caller's value (pongo2 gives it nil: an
    /// error in a strict prompt, nothing in a lenient one).
    fn hide(&mut self, hidden: Vec<(usize, usize, Vec<String>)>) {
        for (index, at, names) in hidden {
            if names.is_empty() {
                continue;
            }
            let Some(scanned) = self
                .units
                .get_mut(index)
                .and_then(|unit| unit.scanned.as_mut())
            else {
                continue;
            };
            let scope = scanned
                .edits
                .iter_mut()
                .filter(|edit| edit.original.end <= at && edit.replacement.ends_with(" with %}{% "))
                .max_by_key(|edit| edit.original.end);
            if let Some(edit) = scope {
                let bound: Vec<String> = names
                    .iter()
                    .map(|name| format!("{name}=__django_nil()"))
                    .collect();
                let head = edit.replacement.trim_end_matches(" with %}{% ");
                edit.replacement = format!("{head} with {} %}}{{% ", bound.join(", "));
            }
        }
    }

    /// What the templates used without context need from a context: the
    /// names they read and do not set, and those of the templates they
    /// pass their context to (`order`: each template after those it
    /// uses). `None` for the templates not looked at; at most
    /// [`MAX_NEEDS`] names each (a template past them needs something).
    fn needs(&self, order: &[usize]) -> Vec<Option<BTreeSet<String>>> {
        let mut needs: Vec<Option<BTreeSet<String>>> = vec![None; self.units.len()];
        // Only the templates used without context, and those they use.
        let mut wanted = vec![false; self.units.len()];
        let mut queue: Vec<usize> = self
            .units
            .iter()
            .flat_map(|unit| &unit.links)
            .filter(|link| !link.with_context)
            .flat_map(|link| link.targets.iter().copied())
            .collect();
        while let Some(index) = queue.pop() {
            match wanted.get_mut(index) {
                Some(seen) if !*seen => *seen = true,
                _ => continue,
            }
            if let Some(unit) = self.units.get(index) {
                queue.extend(
                    unit.links
                        .iter()
                        .filter(|link| link.with_context)
                        .flat_map(|link| link.targets.iter().copied()),
                );
            }
        }
        for &index in order {
            if wanted.get(index) != Some(&true) {
                continue;
            }
            let Some(scanned) = self.units.get(index).and_then(|unit| unit.scanned.as_ref()) else {
                continue;
            };
            let mut own: BTreeSet<String> = scanned.free.iter().take(MAX_NEEDS).cloned().collect();
            let links = self.units.get(index).map_or(&[][..], |unit| &unit.links);
            for link in links.iter().filter(|link| link.with_context) {
                for target in &link.targets {
                    let Some(Some(more)) = needs.get(*target) else {
                        continue;
                    };
                    for name in more.iter().filter(|name| !scanned.locals.contains(*name)) {
                        if own.len() >= MAX_NEEDS {
                            break;
                        }
                        own.insert(name.clone());
                    }
                }
            }
            if let Some(slot) = needs.get_mut(index) {
                *slot = Some(own);
            }
        }
        needs
    }

    /// The error of a template used without context that reads `names`.
    fn without_context(
        &self,
        link: &Link,
        target: usize,
        names: &BTreeSet<String>,
        given: Option<&BTreeSet<String>>,
    ) -> TemplateError {
        let shown = self.shown(target);
        let mut listed: Vec<String> = names
            .iter()
            .take(3)
            .map(|name| format!("\"{name}\""))
            .collect();
        if names.len() > 3 {
            listed.push(format!("{} more", names.len() - 3));
        }
        let listed = match listed.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        };
        if let Some(given) = given {
            let given: Vec<&str> = given.iter().map(String::as_str).collect();
            return TemplateError::parse(
                Some(link.tag.span.clone()),
                format!(
                    "{shown} is included with `only`, so it sees only {} (pongo2 gives it nothing else), but it reads {listed}",
                    given.join(", ")
                ),
            )
            .with_kind("without-context")
            .suggest(Some("pass those values too (`with name=value`), or drop `only`".to_string()));
        }
        let how = match link.tag.tag {
            Tag::Include => "included without context",
            _ => "imported without context (Jinja's default for an import)",
        };
        TemplateError::parse(
            Some(link.tag.span.clone()),
            format!(
                "{shown} is {how}, so it does not see the variables of the template using it, but it reads {listed}"
            ),
        )
        .with_kind("without-context")
        .suggest(Some(match link.tag.tag {
            Tag::Include => "drop `without context`, or set the names in the included template".to_string(),
            _ => "add `with context` to the import, or pass the values to its macros as arguments".to_string(),
        }))
    }

    /// A template that others include or import reads `loop` outside its
    /// own loops: Jinja2 does not pass the caller's `loop` (minijinja
    /// would).
    fn check_loose_loop(&self, target: usize, found: &mut Findings) {
        let Some(span) = self
            .units
            .get(target)
            .and_then(|unit| unit.scanned.as_ref())
            .and_then(|scanned| scanned.loose_loop.clone())
        else {
            return;
        };
        found.push(
            self.place(
                target,
                TemplateError::parse(
                    Some(span),
                    "this template is included or imported, and reads `loop` outside a loop of its own: Jinja2 does not pass the caller's `loop` to it (it is undefined here)",
                )
                .with_kind("without-context")
                .suggest(Some(
                    "set what it needs before the include: {% set index = loop.index %}, then read `index`".to_string(),
                )),
            ),
        );
    }

    /// `from … import name`: each name must be one `target` defines.
    fn check_imported(&self, index: usize, link: &Link, target: usize, found: &mut Findings) {
        let Some(exports) = self
            .units
            .get(target)
            .and_then(|unit| unit.scanned.as_ref())
            .map(|scanned| &scanned.exports)
        else {
            return;
        };
        for (name, span) in &link.tag.imported {
            if exports.contains(name) {
                continue;
            }
            let suggestion = closest(name, exports.iter().map(String::as_str))
                .map(|near| format!("did you mean \"{near}\"?"));
            let message = match self.pongo2 {
                true => format!(
                    "{} exports no macro \"{name}\" to import (pongo2 imports only the macros marked `export`)",
                    self.shown(target)
                ),
                false => format!(
                    "{} defines no macro or variable \"{name}\" to import",
                    self.shown(target)
                ),
            };
            found.push(
                self.place(
                    index,
                    TemplateError::parse(Some(span.clone()), message)
                        .with_kind("unresolved-include")
                        .suggest(suggestion),
                ),
            );
        }
    }

    /// The templates from the body on, each after those it uses (cycles
    /// cut), and each cycle: the template and link closing it, and the
    /// chain of templates from the first to it and back.
    #[allow(clippy::type_complexity)]
    fn walk_order(&self) -> (Vec<usize>, Vec<(usize, usize, Vec<usize>)>) {
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![NEW; self.units.len()];
        let mut order = Vec::new();
        let mut cycles = Vec::new();
        if self.units.is_empty() {
            return (order, cycles);
        }
        // (template, link, target): the next target to visit.
        let mut stack: Vec<(usize, usize, usize)> = vec![(0, 0, 0)];
        if let Some(first) = state.get_mut(0) {
            *first = OPEN;
        }
        while let Some(&(index, link, target)) = stack.last() {
            let links = self.units.get(index).map_or(&[][..], |unit| &unit.links);
            let Some(current) = links.get(link) else {
                if let Some(slot) = state.get_mut(index) {
                    *slot = DONE;
                }
                order.push(index);
                stack.pop();
                continue;
            };
            let Some(&next) = current.targets.get(target) else {
                if let Some(top) = stack.last_mut() {
                    *top = (index, link + 1, 0);
                }
                continue;
            };
            if let Some(top) = stack.last_mut() {
                *top = (index, link, target + 1);
            }
            match state.get(next).copied() {
                Some(NEW) => {
                    if let Some(slot) = state.get_mut(next) {
                        *slot = OPEN;
                    }
                    stack.push((next, 0, 0));
                }
                // Past the errors a file reports, a cycle is not spelled
                // out (a chain may be a thousand templates long).
                Some(OPEN) if cycles.len() >= MAX_ERRORS_PER_FILE => {}
                Some(OPEN) => {
                    let from = stack
                        .iter()
                        .position(|(open, _, _)| *open == next)
                        .unwrap_or(0);
                    let mut chain: Vec<usize> = stack
                        .get(from..)
                        .unwrap_or_default()
                        .iter()
                        .map(|(open, _, _)| *open)
                        .collect();
                    chain.push(next);
                    cycles.push((index, link, chain));
                }
                _ => {}
            }
        }
        (order, cycles)
    }
}

/// Whether the tag says `with context` (`Some(true)`) or `without
/// context` (`Some(false)`), after its name.
fn context_marker(text: &str, tag: &Ref) -> Option<bool> {
    let tail = text.get(tag.span.end..tag.end)?;
    let words: Vec<&str> = tail
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|word| !word.is_empty())
        .collect();
    words.windows(2).find_map(|pair| match pair {
        ["with", "context"] => Some(true),
        ["without", "context"] => Some(false),
        _ => None,
    })
}

/// The message of a name that no file answers.
fn missing(tag: Tag, names: &[String], tried: &[PathBuf]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("{name:?}")).collect();
    let what = match quoted.as_slice() {
        [one] => one.clone(),
        [] => "an empty list of names".to_string(),
        many => format!("any of {}", many.join(", ")),
    };
    let tried: Vec<String> = tried
        .iter()
        .map(|path| path.to_string_lossy().replace('\\', "/"))
        .collect();
    if tried.is_empty() {
        return format!("cannot {} {what}: there is no name to look for", tag.verb());
    }
    format!(
        "cannot find {what} to {}: no file {} in the include root",
        tag.verb(),
        tried.join(", ")
    )
}
