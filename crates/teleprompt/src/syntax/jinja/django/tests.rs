//! The translation on its own: the Jinja text it makes.

use super::translate;

fn jinja(body: &str) -> String {
    translate(body, None)
        .map(|translation| numbered(&translation.edited.text))
        .unwrap_or_else(|error| format!("ERROR {error:?}"))
}

/// The text with each cycle's number (unique in the process) as `N`.
fn numbered(text: &str) -> String {
    let mut out = String::new();
    let mut values = text.split("__django_cycle_values_");
    let mut text = values.next().unwrap_or_default().to_string();
    for piece in values {
        text.push_str("__django_cycle_values_N");
        text.push_str(piece.trim_start_matches(|c: char| c.is_ascii_digit()));
    }
    let mut rest = text.as_str();
    let next = |rest: &str| {
        [rest.find("__django_cycle"), rest.find("__django_site(")]
            .into_iter()
            .flatten()
            .min()
    };
    while let Some(at) = next(rest) {
        let (before, after) = rest.split_at(at);
        out.push_str(before);
        let open = after.find('(').map_or(after.len(), |i| i + 1);
        out.push_str(&after[..open]);
        let digits = after[open..]
            .chars()
            .take_while(char::is_ascii_digit)
            .count();
        if digits > 0 {
            out.push('N');
        }
        rest = &after[open + digits..];
    }
    out.push_str(rest);
    out
}

#[test]
fn cycles_parentloop_and_files() {
    assert_eq!(
        jinja("{% cycle 'a' 'b' as row silent %}{% cycle row %}"),
        "{% macro __django_cycle_values_N(__django_i) %}{% if __django_i == 0 %}{{ 'a' }}{% elif __django_i == 1 %}{{ 'b' }}{% endif %}{% endmacro %}{% set row = __django_cycle_as(N, true, __django_cycle_values_N, 2) %}{{ __django_cycle(N, row) }}"
    );
    assert_eq!(
        jinja("{%- cycle 'a' 'b' as row -%}"),
        "{%- macro __django_cycle_values_N(__django_i) %}{% if __django_i == 0 %}{{ 'a' }}{% elif __django_i == 1 %}{{ 'b' }}{% endif %}{% endmacro %}{% set row = __django_cycle_as(N, false, __django_cycle_values_N, 2) %}{{ row -}}"
    );
    assert_eq!(
        jinja("{% for a in xs -%}{% for b in ys %}{{ forloop.Parentloop.Counter }}{% endfor %}{% endfor %}"),
        "{% for a in (xs)|__django_for(false, false, false) -%}{% set __django_loop_0 = loop -%}{% for b in (ys)|__django_for(false, false, false) %}{{ __django_loop_0.index }}{% endfor %}{% endfor %}"
    );
    assert_eq!(
        jinja("{% include \"x.html\" if_exists %}"),
        "{% with __django_site_path=__django_site(N) %}{% include \"x.html\" ignore missing %}{% endwith %}"
    );
    assert_eq!(
        jinja("{%- include \"x.html\" with a=b|default:1 c=forloop.Counter only -%}"),
        "{%- with __django_site_path=__django_site(N), a=b|default(1), c=loop.index %}{% include \"x.html\" without context %}{% endwith -%}"
    );
    assert_eq!(
        jinja("{% import \"m.html\" a, b as c %}"),
        "{% from \"m.html\" import a, b as c with context %}"
    );
    assert_eq!(
        jinja("{% ssi \"p.html\" parsed %}"),
        "{% with __django_site_path=__django_site(N) %}{% include \"p.html\" %}{% endwith %}"
    );
    assert_eq!(
        jinja("x{% extends \"base.html\" %}{% block a %}{{ block.Super }}{% endblock %}"),
        "{% if false %}x{% endif %}{% extends \"base.html\" %}{% if false %}{% block a %}{{ super() }}{% endblock %}{% endif %}"
    );
    assert!(jinja("{% ssi \"p.html\" %}").contains("no include root"));
    assert!(jinja("{% include \"x.html\" only %}").contains("malformed"));
    assert!(
        jinja("{% for a in xs %}{{ forloop.Parentloop.Counter }}{% endfor %}")
            .contains("no outer loop")
    );
    let exported = translate(
        "{% macro a() export %}{% endmacro %}{% macro b() %}{% endmacro %}",
        None,
    )
    .unwrap();
    assert_eq!(exported.exports.into_iter().collect::<Vec<_>>(), ["a"]);
}

#[test]
fn colon_arguments_become_calls() {
    assert_eq!(
        jinja("{{ name|default:\"there\" }}"),
        "{{ name|default(\"there\") }}"
    );
    assert_eq!(jinja("{{ n|add:2|add:-1 }}"), "{{ n|add(2)|add(-1) }}");
    assert_eq!(
        jinja("{{ a|default:b.c[0]|upper }}"),
        "{{ a|default(b.c[0])|upper }}"
    );
    assert_eq!(jinja("text {x} {{ x }}"), "text {x} {{ x }}");
}

#[test]
fn loops() {
    assert_eq!(
        jinja("{% for x in xs reversed %}{{ forloop.Counter }}{% empty %}-{% endfor %}"),
        "{% for x in (xs)|__django_for(true, false, false) %}{{ loop.index }}{% else %}-{% endfor %}"
    );
    assert_eq!(
        jinja("{% for k, v in m sorted %}{% cycle 'a' 'b' %}{% endfor %}"),
        "{% for k, v in (m)|__django_for(false, true, true) %}{{ __django_cycle(N, 'a', 'b') }}{% endfor %}"
    );
}

#[test]
fn tags() {
    assert_eq!(
        jinja("{% ifequal a b %}y{% endifequal %}"),
        "{% if a == b %}y{% endif %}"
    );
    assert_eq!(
        jinja("{% with a=b c=d %}{% endwith %}"),
        "{% with a=b, c=d %}{% endwith %}"
    );
    assert_eq!(
        jinja("{% with b as a %}{% endwith %}"),
        "{% with a=b %}{% endwith %}"
    );
    assert_eq!(
        jinja("{% firstof a b \"x\" %}"),
        "{{ __django_firstof(a, b, \"x\") }}"
    );
    assert_eq!(jinja("{%- comment -%}x{% endcomment -%}"), "{#- -#}");
    assert_eq!(
        jinja("{% if a && !b || c <> d %}{% endif %}"),
        "{% if a  and   not b  or  c != d %}{% endif %}"
    );
    assert_eq!(
        jinja("{% autoescape off %}{% endautoescape %}"),
        "{% autoescape false %}{% endautoescape %}"
    );
}

#[test]
fn the_filter_list_names_every_registered_filter() {
    let registered: Vec<&str> = super::filters::names().collect();
    assert_eq!(registered, super::FILTERS);
}

#[test]
fn broken_input_is_an_error_or_a_translation_never_a_panic() {
    let pieces = [
        "{{",
        "}}",
        "{%",
        "%}",
        "{#",
        "#}",
        "|",
        ":",
        "\"",
        "'",
        "\\",
        "for",
        "in",
        "reversed",
        "empty",
        "endfor",
        "ifequal",
        "with",
        "as",
        "=",
        "firstof",
        "cycle",
        "now",
        "fake",
        "forloop",
        ".",
        "Counter",
        "verbatim",
        "endverbatim",
        "comment",
        "endcomment",
        "-",
        "é",
        " ",
        "\n",
        "(",
        ")",
        "[",
        "widthratio",
        "ifchanged",
        "templatetag",
        "x",
        "block",
        "endblock",
        "extends \"b.html\"",
        "set",
        "Super",
    ];
    // A deterministic walk through many short combinations.
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..5_000 {
        let mut body = String::new();
        for _ in 0..(seed % 12) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            body.push_str(pieces[(seed % pieces.len() as u64) as usize]);
        }
        seed = seed.wrapping_add(1);
        if translate(&body, None).is_ok() {
            // And minijinja takes the translation (or reports an error).
            let _ = crate::syntax::jinja::JinjaTemplate::compile(
                &body,
                crate::syntax::jinja::Syntax::Django,
                &crate::syntax::CompileOptions {
                    strictness: crate::options::Strictness::Semi,
                    functions: Default::default(),
                    jinja: Default::default(),
                    limits: crate::limits::Limits {
                        max_output: 1 << 20,
                        ..crate::limits::Limits::DEFAULT
                    },
                    includes: None,
                    origin: crate::syntax::Origin::Teleprompt,
                    data_roles: "user,assistant".into(),
                },
            );
        }
    }
}

/// Each block of a template that extends none restores, after it, the
/// names read later that an extending template's block set: with many
/// blocks and many names, that text is bounded (and made in one pass).
#[test]
fn names_restored_after_blocks_are_bounded() {
    let mut body = String::new();
    for i in 0..5_000 {
        body.push_str(&format!("{{% block b{i} %}}{{% endblock %}}"));
    }
    for i in 0..50_000 {
        body.push_str(&format!("{{{{ name{i} }}}}"));
    }
    let started = std::time::Instant::now();
    let translation = translate(&body, None).expect("translates");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let added = translation.edited.text.len() - body.len();
    assert!(added < 2 << 20, "{added} bytes added");
    // A small one restores each name read after the block.
    assert_eq!(
        jinja("{% block a %}{% endblock %}{{ n }}"),
        "{% set __django_block_a = namespace() %}{% block a %}{% endblock %}{% if __django_block_a.n is defined %}{% set n = __django_block_a.n %}{% endif %}{{ n }}"
    );
    assert_eq!(
        jinja("{% extends \"b\" %}{% block a %}{% set n = 1 %}{% endblock %}"),
        "{% extends \"b\" %}{% if false %}{% block a %}{% set n = 1 %}{% if __django_block_a is defined %}{% set __django_block_a.n = n %}{% endif %}{% endblock %}{% endif %}"
    );
}
