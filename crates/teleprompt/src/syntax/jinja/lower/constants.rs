//! Constants read from the AST: what the engine holds as Jinja does
//! (strings, integers, booleans, `none`), constant keys and JSON values
//! (macro defaults, literal lists and maps), `format`'s fields, and small
//! shapes of expressions (`|safe`, `-1`, a splat's value, a `for`'s
//! `items()`).

use super::*;

/// A constant the engine holds as Jinja does: strings, integers, booleans
/// and `none` (floats would print otherwise).
pub(super) fn constant_of(value: &minijinja::Value) -> Option<Const> {
    Some(match value.kind() {
        ValueKind::String => Const::Str(value.as_str()?.into()),
        ValueKind::Bool => Const::Bool(value.is_true()),
        ValueKind::None => Const::Null,
        ValueKind::Number if value.is_integer() => Const::Int(value.as_i64()?),
        _ => return None,
    })
}

/// How many arguments `format.format(…)` reads, if its fields are all
/// `{}` or all `{N}` (`N` below 100), and it has no `{{`, `}}` or `}`
/// alone.
pub(super) fn format_fields(format: &str) -> Option<usize> {
    let (mut auto, mut most) = (0usize, None::<usize>);
    let mut rest = format;
    while let Some((before, field)) = rest.split_once('{') {
        let (index, after) = field.split_once('}')?;
        if before.contains('}') {
            return None;
        }
        match index {
            "" => auto += 1,
            digits
                if (1..=2).contains(&digits.len())
                    && digits.bytes().all(|b| b.is_ascii_digit()) =>
            {
                let n: usize = digits.parse().ok()?;
                most = Some(most.map_or(n, |most| most.max(n)));
            }
            _ => return None,
        }
        rest = after;
    }
    if rest.contains('}') {
        return None;
    }
    match (auto, most) {
        (0, Some(most)) => Some(most + 1),
        (auto, None) => Some(auto),
        // `{}` and `{0}` together: minijinja's error.
        _ => None,
    }
}

/// Whether `key` names a map's key alone where minijinja's `sort` reads
/// an attribute (not a path `a.b`, keys `a, b` or an index `0`).
pub(super) fn plain_key(key: &str) -> bool {
    !key.is_empty()
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !key.bytes().all(|b| b.is_ascii_digit())
}

/// A literal's key: a constant other than a float.
pub(super) fn constant_key(expr: &ast::Expr<'_>) -> Option<Const> {
    match expr {
        ast::Expr::Const(constant) => constant_of(&constant.value),
        _ => None,
    }
}

/// A literal of constants other than floats (lists and maps with string
/// keys of them too) as JSON; `None` for anything else.
pub(super) fn constant_json(expr: &ast::Expr<'_>) -> Option<serde_json::Value> {
    use serde_json::Value as Json;
    Some(match expr {
        ast::Expr::Const(_) => match constant_key(expr)? {
            Const::Null => Json::Null,
            Const::Bool(b) => Json::Bool(b),
            Const::Int(i) => Json::from(i),
            Const::Str(s) => Json::String(s.into()),
            _ => return None,
        },
        ast::Expr::List(list) => Json::Array(
            list.items
                .iter()
                .map(constant_json)
                .collect::<Option<Vec<_>>>()?,
        ),
        // A tuple reads as a list (`x in ('a', 'b')`); printed, it is
        // minijinja's.
        ast::Expr::Tuple(tuple) => Json::Array(
            tuple
                .items
                .iter()
                .map(constant_json)
                .collect::<Option<Vec<_>>>()?,
        ),
        ast::Expr::Map(map) => {
            let mut object = serde_json::Map::with_capacity(map.keys.len());
            for (key, value) in map.keys.iter().zip(&map.values) {
                let Const::Str(key) = constant_key(key)? else {
                    return None;
                };
                object.insert(key.into(), constant_json(value)?);
            }
            Json::Object(object)
        }
        _ => return None,
    })
}

/// The map of `map.items()`, `map | items` or `map | dictsort` (true:
/// by key, whatever its case).
pub(super) fn entries_of<'e, 'a>(expr: &'e ast::Expr<'a>) -> Option<(&'e ast::Expr<'a>, bool)> {
    match expr {
        ast::Expr::Call(called) if called.args.is_empty() => match &called.expr {
            ast::Expr::GetAttr(attr) if attr.name == "items" => Some((&attr.expr, false)),
            _ => None,
        },
        ast::Expr::Filter(filter) if filter.args.is_empty() => match filter.name {
            "items" => Some((filter.expr.as_ref()?, false)),
            "dictsort" => Some((filter.expr.as_ref()?, true)),
            _ => None,
        },
        _ => None,
    }
}

/// `expr` without a last `| safe`.
pub(super) fn without_safe<'e, 'a>(expr: &'e ast::Expr<'a>) -> &'e ast::Expr<'a> {
    match expr {
        ast::Expr::Filter(filter) if filter.name == "safe" && filter.args.is_empty() => {
            filter.expr.as_ref().map_or(expr, |inner| inner)
        }
        _ => expr,
    }
}

/// Whether `expr` is the constant `-1`.
pub(super) fn is_minus_one(expr: &ast::Expr<'_>) -> bool {
    match expr {
        ast::Expr::Const(constant) => constant.value.as_i64() == Some(-1),
        ast::Expr::UnaryOp(op) => {
            matches!(op.op, ast::UnaryOpKind::Neg)
                && matches!(&op.expr, ast::Expr::Const(c) if c.value.as_i64() == Some(1))
        }
        _ => false,
    }
}

/// The value of a `*args` or `**kwargs` argument.
pub(super) fn value_of_splat<'e, 'a>(arg: &'e ast::CallArg<'a>) -> &'e ast::Expr<'a> {
    match arg {
        ast::CallArg::Pos(value)
        | ast::CallArg::Kwarg(_, value)
        | ast::CallArg::PosSplat(value)
        | ast::CallArg::KwargSplat(value) => value,
    }
}

/// A map literal of constants whose keys are all integers (each once):
/// its pairs, in order; `None` for anything else (text keys are
/// [`constant_json`]'s).
pub(super) fn int_keyed(expr: &ast::Expr<'_>) -> Option<Vec<(i64, serde_json::Value)>> {
    let ast::Expr::Map(map) = expr else {
        return None;
    };
    let mut pairs: Vec<(i64, serde_json::Value)> = Vec::with_capacity(map.keys.len());
    for (key, value) in map.keys.iter().zip(&map.values) {
        let key = int_constant(key)?;
        if pairs.iter().any(|(seen, _)| *seen == key) {
            return None;
        }
        pairs.push((key, constant_json(value)?));
    }
    (!pairs.is_empty()).then_some(pairs)
}

/// An integer constant: `5`, or `-5` (a negation in the AST).
pub(super) fn int_constant(expr: &ast::Expr<'_>) -> Option<i64> {
    match expr {
        ast::Expr::Const(_) => match constant_key(expr)? {
            Const::Int(i) => Some(i),
            _ => None,
        },
        ast::Expr::UnaryOp(op) if matches!(op.op, ast::UnaryOpKind::Neg) => {
            int_constant(&op.expr)?.checked_neg()
        }
        _ => None,
    }
}

/// A constant of JSON (of [`constant_json`]: no floats).
pub(super) fn json_constant(json: &serde_json::Value) -> Option<Const> {
    use serde_json::Value as Json;
    Some(match json {
        Json::Null => Const::Null,
        Json::Bool(b) => Const::Bool(*b),
        Json::Number(n) => Const::Int(n.as_i64()?),
        Json::String(s) => Const::Str(s.as_str().into()),
        Json::Array(items) => Const::List(items.clone().into_boxed_slice()),
        Json::Object(_) => Const::Map(Box::new(json.clone())),
    })
}

/// Whether a lowered `set` value, read as a test reads it
/// ([`JinjaOp::Tested`]), keeps a missing value a plain read would fail
/// on: an operand of `or`/`and` that reads the data (a missing key is
/// false there, as minijinja's undefined), a [`JinjaOp::Held`] name or
/// [`JinjaOp::Unset`] (`a if b`), at any depth of `or`, `and` and the
/// branches of `if`.
pub(super) fn reads_missing(expr: &Expr) -> bool {
    match expr {
        Expr::Call {
            func: Func::Jinja(JinjaOp::Held | JinjaOp::Unset),
            ..
        } => true,
        Expr::Call {
            func: Func::Or | Func::And,
            args,
            ..
        } => args
            .iter()
            .any(|arg| reads_missing(arg) || matches!(arg, Expr::Path { .. })),
        Expr::Call {
            func: Func::Jinja(JinjaOp::Cond),
            args,
            ..
        } => args.iter().skip(1).any(reads_missing),
        _ => false,
    }
}

/// Whether a [`reads_missing`] value may come out missing (minijinja's
/// undefined): what `or` returns last, any operand `and` returns, a
/// branch of `if`; a read of the data there too where `paths`.
pub(super) fn may_be_undefined(expr: &Expr, paths: bool) -> bool {
    let missing =
        |arg: &Expr| may_be_undefined(arg, paths) || paths && matches!(arg, Expr::Path { .. });
    match expr {
        Expr::Call {
            func: Func::Jinja(JinjaOp::Held | JinjaOp::Unset),
            ..
        } => true,
        Expr::Call {
            func: Func::Or,
            args,
            ..
        } => args.last().is_some_and(missing),
        Expr::Call {
            func: Func::And,
            args,
            ..
        } => args.iter().any(missing),
        Expr::Call {
            func: Func::Jinja(JinjaOp::Cond),
            args,
            ..
        } => args.iter().skip(1).any(missing),
        _ => false,
    }
}
