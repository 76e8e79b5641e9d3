//! Partials from files: `{{> persona}}` with no inline definition of
//! `persona` reads a file of the include root (see [`crate::document::include_root`] for
//! the names tried: `persona.hbs`, Dotprompt's `_persona.prompt`, Forge's
//! `persona.md`, …), when the prompt loads. A partial file may use further
//! partials, found beside it first. Its text is used as it is (no front
//! matter is read from it, as handlebars.js, Dotprompt and Forge register
//! partial files).
//!
//! The engine keeps one source text per program, so the bodies of the
//! partial files are appended to the template's body and their trees'
//! spans moved there; an error whose span falls in a partial file's part
//! is placed in that file, labelled with the partial calls that led there
//! (see [`crate::syntax::included`]): a label names a call by the
//! partial's name, as a missing partial is named.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;
use std::path::PathBuf;

use super::ast::*;
use super::{dotprompt_helpers, parse};
use crate::diagnostics::TemplateError;
use crate::document::include_root::{too_deep, Includes, MAX_FILES};
use crate::document::Document;
use crate::syntax::included::Placements;

/// A partial read from a file, its tree placed in the combined source.
#[derive(Debug)]
pub(crate) struct FilePartial {
    pub name: String,
    pub nodes: Vec<Node>,
}

/// The partials a template reads from files, and the combined source.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub partials: Vec<FilePartial>,
    /// The body followed by each partial file's text.
    pub source: String,
    pub placed: Placements,
    /// For each partial name looked for and not found, where.
    pub misses: BTreeMap<String, String>,
}

/// Reads the partials that `tree` (parsed from `body`) uses and does not
/// define inline, and the ones those use, from `includes`.
///
/// A name is looked for beside the file that calls it first, so one name
/// may mean two files (`{{> sign}}` in the body and in `common/tail.hbs`
/// beside a `common/sign.hbs`): the program knows the first file by the
/// name, the others by the name and their path (`sign (common/sign.hbs)`),
/// and the calls that mean them are renamed so.
pub(crate) fn load(
    tree: &mut Tree,
    body: &str,
    includes: Option<&Includes>,
    dotprompt: bool,
    max_nesting: usize,
    max_depth: usize,
) -> Result<Loaded, TemplateError> {
    let mut loaded = Loaded {
        source: body.to_string(),
        ..Loaded::default()
    };
    let Some(includes) = includes else {
        return Ok(loaded);
    };
    name_calls(&tree.nodes, &mut loaded.placed);
    let mut inline = HashSet::new();
    inline_names(&tree.nodes, &mut inline);
    // What each name resolved to in each folder: the partial's name in
    // the program, or `None` when no file was found.
    let mut resolved: HashMap<(PathBuf, String), Option<String>> = HashMap::new();
    // The program's name for each file read, and the names given out.
    let mut by_file: HashMap<PathBuf, String> = HashMap::new();
    let mut taken: HashSet<String> = HashSet::new();
    // (the partial file, or `None` for the body; where its names resolve;
    // how deep the files it names are)
    let mut queue: Vec<(Option<usize>, Includes, usize)> = vec![(None, includes.clone(), 1)];
    while let Some((includer, includes, depth)) = queue.pop() {
        let mut wanted = Vec::new();
        match includer {
            None => static_partials(&tree.nodes, &mut wanted),
            Some(index) => {
                if let Some(partial) = loaded.partials.get(index) {
                    static_partials(&partial.nodes, &mut wanted);
                }
            }
        }
        let mut renames: Vec<(Range<usize>, String)> = Vec::new();
        for (name, name_span) in wanted {
            if inline.contains(&name) {
                continue;
            }
            let key = (includes.dir().to_path_buf(), name.clone());
            let program_name = match resolved.get(&key) {
                Some(done) => done.clone(),
                None => {
                    let found = resolve(
                        &mut loaded,
                        &includes,
                        &name,
                        &name_span,
                        &mut by_file,
                        &mut taken,
                        dotprompt,
                        max_nesting,
                        &mut inline,
                        &mut queue,
                        (depth, max_depth),
                    )?;
                    resolved.insert(key, found.clone());
                    found
                }
            };
            if let Some(program_name) = program_name.filter(|program| *program != name) {
                renames.push((name_span, program_name));
            }
        }
        if !renames.is_empty() {
            let nodes = match includer {
                None => Some(&mut tree.nodes),
                Some(index) => loaded
                    .partials
                    .get_mut(index)
                    .map(|partial| &mut partial.nodes),
            };
            if let Some(nodes) = nodes {
                rename_partials(nodes, &renames);
            }
        }
    }
    Ok(loaded)
}

/// Looks for the file a partial `name` called at `name_span` means, from
/// `includes`: its name in the program (a file read before keeps the name
/// it got), or `None` when no file has that name (noted in `misses`).
#[allow(clippy::too_many_arguments)]
fn resolve(
    loaded: &mut Loaded,
    includes: &Includes,
    name: &str,
    name_span: &Range<usize>,
    by_file: &mut HashMap<PathBuf, String>,
    taken: &mut HashSet<String>,
    dotprompt: bool,
    max_nesting: usize,
    inline: &mut HashSet<String>,
    queue: &mut Vec<(Option<usize>, Includes, usize)>,
    (depth, max_depth): (usize, usize),
) -> Result<Option<String>, TemplateError> {
    // An error at the name, in the body or a partial file.
    let at = |loaded: &Loaded, message: String| {
        loaded
            .placed
            .place(TemplateError::parse(Some(name_span.clone()), message))
    };
    let found = includes
        .partial_candidates(name)
        .and_then(|candidates| Ok((includes.read_first(&candidates)?, candidates)));
    let (relative, found) = match found {
        Ok((Some(found), _)) => found,
        Ok((None, candidates)) => {
            loaded
                .misses
                .insert(name.to_string(), describe_misses(&candidates));
            return Ok(None);
        }
        Err(message) => return Err(at(loaded, message)),
    };
    if let Some(program_name) = by_file.get(&relative) {
        return Ok(Some(program_name.clone()));
    }
    if loaded.partials.len() >= MAX_FILES {
        return Err(at(
            loaded,
            format!(
                "more than {MAX_FILES} partial files are included: the most one prompt may read"
            ),
        ));
    }
    if depth > max_depth {
        return Err(at(loaded, too_deep(max_depth)));
    }
    let document = Document::plain(&found.origin, found.text);
    let parsed = parse::parse_nested(&document.body, max_nesting).and_then(|mut tree| {
        if dotprompt {
            dotprompt_helpers::rewrite(&mut tree)?;
        }
        Ok(tree)
    });
    let mut partial_tree = match parsed {
        Ok(tree) => tree,
        Err(error) => {
            let error = document.locate(error);
            return Err(loaded.placed.included_at(error, name_span.clone()));
        }
    };
    inline_names(&partial_tree.nodes, inline);
    let base = loaded.source.len();
    loaded.source.push_str(&document.body);
    shift_nodes(&mut partial_tree.nodes, base);
    name_calls(&partial_tree.nodes, &mut loaded.placed);
    loaded
        .placed
        .push(base..loaded.source.len(), document, Some(name_span.clone()));
    // The first file of a name has the name; another file the same name
    // means elsewhere has its path too.
    let program_name = if taken.contains(name) {
        format!("{name} ({})", relative.display())
    } else {
        name.to_string()
    };
    taken.insert(program_name.clone());
    by_file.insert(relative.clone(), program_name.clone());
    loaded.partials.push(FilePartial {
        name: program_name.clone(),
        nodes: partial_tree.nodes,
    });
    queue.push((
        Some(loaded.partials.len() - 1),
        includes.beside(&relative),
        depth + 1,
    ));
    Ok(Some(program_name))
}

/// Gives the partial calls at the spans of `renames` their new names.
fn rename_partials(nodes: &mut [Node], renames: &[(Range<usize>, String)]) {
    for node in nodes {
        match node {
            Node::Partial(partial) => {
                if let Some((_, name)) = renames.iter().find(|(span, _)| *span == partial.name_span)
                {
                    partial.name = name.clone();
                }
                if let Some(block) = &mut partial.block {
                    rename_partials(block, renames);
                }
            }
            Node::Inline(inline) => rename_partials(&mut inline.body, renames),
            Node::Block(block) => {
                rename_partials(&mut block.body, renames);
                if let Some(inverse) = &mut block.inverse {
                    rename_partials(inverse, renames);
                }
            }
            _ => {}
        }
    }
}

fn describe_misses(candidates: &[PathBuf]) -> String {
    let names: Vec<String> = candidates
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    format!("no file {}", names.join(", "))
}

/// The names of the inline partials `nodes` define.
fn inline_names(nodes: &[Node], names: &mut HashSet<String>) {
    let mut inlines = Vec::new();
    super::lower::collect_inlines(nodes, &mut inlines);
    names.extend(inlines.iter().map(|inline| inline.name.clone()));
}

/// The partials `nodes` call by a written name (not `{{> (expr)}}`, not
/// `@partial-block`), with the span of the name.
fn static_partials(nodes: &[Node], out: &mut Vec<(String, Range<usize>)>) {
    for node in nodes {
        match node {
            Node::Partial(partial) => {
                if partial.dynamic.is_none() && partial.name != "@partial-block" {
                    out.push((partial.name.clone(), partial.name_span.clone()));
                }
                if let Some(block) = &partial.block {
                    static_partials(block, out);
                }
            }
            Node::Inline(inline) => static_partials(&inline.body, out),
            Node::Block(block) => {
                static_partials(&block.body, out);
                if let Some(inverse) = &block.inverse {
                    static_partials(inverse, out);
                }
            }
            _ => {}
        }
    }
}

/// Notes, for every partial call of `nodes`, that a label names it by
/// the partial's name.
fn name_calls(nodes: &[Node], placed: &mut Placements) {
    for node in nodes {
        match node {
            Node::Partial(partial) => {
                placed.name_call(partial.span.start, partial.name_span.clone());
                if let Some(block) = &partial.block {
                    name_calls(block, placed);
                }
            }
            Node::Inline(inline) => name_calls(&inline.body, placed),
            Node::Block(block) => {
                name_calls(&block.body, placed);
                if let Some(inverse) = &block.inverse {
                    name_calls(inverse, placed);
                }
            }
            _ => {}
        }
    }
}

/// Moves every span of `nodes` by `by` bytes.
fn shift_nodes(nodes: &mut [Node], by: usize) {
    for node in nodes {
        match node {
            Node::Text(text) => shift(&mut text.span, by),
            Node::Comment(span) => shift(span, by),
            Node::Mustache(mustache) => {
                shift(&mut mustache.span, by);
                shift_call(&mut mustache.call, by);
            }
            Node::Block(block) => {
                shift(&mut block.open, by);
                shift(&mut block.close, by);
                shift_call(&mut block.call, by);
                for param in &mut block.params {
                    shift(&mut param.span, by);
                }
                shift_nodes(&mut block.body, by);
                if let Some(inverse) = &mut block.inverse {
                    shift_nodes(inverse, by);
                }
            }
            Node::Partial(partial) => {
                shift(&mut partial.name_span, by);
                shift(&mut partial.span, by);
                if let Some(context) = &mut partial.context {
                    shift_expr(context, by);
                }
                shift_hash(&mut partial.hash, by);
                if let Some(block) = &mut partial.block {
                    shift_nodes(block, by);
                }
                if let Some(dynamic) = &mut partial.dynamic {
                    shift_expr(dynamic, by);
                }
            }
            Node::Inline(inline) => {
                shift(&mut inline.name_span, by);
                shift(&mut inline.open, by);
                shift_nodes(&mut inline.body, by);
            }
        }
    }
}

fn shift_call(call: &mut Call, by: usize) {
    shift(&mut call.span, by);
    shift_expr(&mut call.head, by);
    for param in &mut call.params {
        shift_expr(param, by);
    }
    shift_hash(&mut call.hash, by);
}

fn shift_hash(hash: &mut [HashPair], by: usize) {
    for pair in hash {
        shift(&mut pair.span, by);
        shift_expr(&mut pair.value, by);
    }
}

fn shift_expr(expr: &mut Expr, by: usize) {
    match expr {
        Expr::Path(path) => {
            shift(&mut path.span, by);
            for part in &mut path.parts {
                shift(&mut part.span, by);
            }
        }
        Expr::String(_, span) | Expr::Number(_, span) | Expr::Bool(_, span) | Expr::Null(span) => {
            shift(span, by)
        }
        Expr::Sub(call) => shift_call(call, by),
    }
}

fn shift(span: &mut Range<usize>, by: usize) {
    *span = span.start + by..span.end + by;
}
