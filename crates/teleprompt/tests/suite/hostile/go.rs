//! Hostile Go templates: each stops with a clear error within the budget
//! (see the runner, `hostile/mod.rs`). The cases of issue 7 and the shapes
//! next to them.

use super::{case, many_keys, run};
use serde_json::json;
use teleprompt::ErrorClass::{Parse, Render};
use teleprompt::Syntax;

/// `t0`…`t{levels-1}` where each calls the next `width` times: width^levels
/// calls from a few hundred bytes.
fn call_tree(levels: usize, width: usize) -> String {
    let mut text = String::new();
    for level in 0..levels {
        text.push_str(&format!("{{{{define \"t{level}\"}}}}"));
        if level + 1 == levels {
            text.push('x');
        } else {
            for _ in 0..width {
                text.push_str(&format!("{{{{template \"t{}\" .}}}}", level + 1));
            }
        }
        text.push_str("{{end}}");
    }
    text.push_str("{{template \"t0\" .}}");
    text
}

#[test]
fn hostile_go_templates_stop_within_the_budget() {
    let n = json!({"n": (0..100_000).collect::<Vec<_>>()});
    run(
        Syntax::Go,
        vec![
            // A message per pass: the messages of one render are a list too.
            case("200,000 messages", "{{ range .list }}{{ role \"user\" }}x{{ end }}", json!({"list": vec![0; 200_000]}), Render, "messages and media parts"),
            // Steps count the work of a pass, not only the pass: comparing two
            // long strings, or entering a loop over a big map (its keys listed
            // and sorted), on every pass of a long loop.
            case("eq of two 1 MB strings in a loop of 100,000", "{{ range .list }}{{ if eq $.a $.b }}x{{ end }}{{ end }}", json!({"list": vec![0; 100_000], "a": "a".repeat(1 << 20), "b": "a".repeat(1 << 20)}), Render, "max_steps"),
            case("lt of two 1 MB strings in a loop of 100,000", "{{ range .list }}{{ if lt $.a $.b }}x{{ end }}{{ end }}", json!({"list": vec![0; 100_000], "a": "a".repeat(1 << 20), "b": "a".repeat(1 << 20)}), Render, "max_steps"),
            case("a loop over 100,000 keys left at once, 100,000 times", "{{ range .list }}{{ range $k, $v := $.m }}{{ break }}{{ end }}{{ end }}", json!({"list": vec![0; 100_000], "m": super::many_keys(100_000)}), Render, "max_steps"),
            // A did-you-mean looks through every key (the data sits under
            // the prompt's own layers: they merged in quadratic time).
            case("a missing name among 100,000 top-level keys", "{{ .missing_name }}", many_keys(100_000), Render, "missing_name"),
            case(
                "pipeline of 10,000 stages",
                format!("{{{{ 1{} }}}}", " | print".repeat(10_000)),
                json!({}),
                Parse,
                "max_nesting",
            ),
            case(
                "parentheses 10,000 deep",
                format!("{{{{ {}1{} }}}}", "(".repeat(10_000), ")".repeat(10_000)),
                json!({}),
                Parse,
                "max_nesting",
            ),
            case(
                "blocks 10,000 deep",
                format!("{}x{}", "{{if 1}}".repeat(10_000), "{{end}}".repeat(10_000)),
                json!({}),
                Parse,
                "max_nesting",
            ),
            case(
                "call tree of 10^9 calls",
                call_tree(10, 10),
                json!({}),
                Render,
                "max_steps",
            ),
            case(
                "a define calling itself twice, 40 deep",
                "{{define \"f\"}}{{if .}}{{template \"f\" (slice . 1)}}{{template \"f\" (slice . 1)}}{{end}}{{end}}{{template \"f\" .s}}",
                json!({"s": "x".repeat(40)}),
                Render,
                "max_steps",
            ),
            case(
                "a define calling itself without end",
                "{{define \"r\"}}{{template \"r\" .}}{{end}}{{template \"r\" .}}",
                json!({}),
                Render,
                "max_call_depth",
            ),
            case(
                "nested ranges of 10^10 passes",
                "{{range .n}}{{range $.n}}{{end}}{{end}}",
                n.clone(),
                Render,
                "max_steps",
            ),
            case(
                "a range over 10^9 integers",
                "{{range 1000000000}}{{end}}",
                json!({}),
                Render,
                "max_steps",
            ),
            case(
                "a string doubled by printf in a range",
                "{{$s := \"x\"}}{{range .n}}{{$s = printf \"%s%s\" $s $s}}{{end}}{{len $s}}",
                n.clone(),
                Render,
                "max_value_bytes",
            ),
            case(
                "a string doubled by print in a range",
                "{{$s := \"x\"}}{{range .n}}{{$s = print $s $s}}{{end}}{{len $s}}",
                n.clone(),
                Render,
                "max_value_bytes",
            ),
            case(
                "a string grown by 20 bytes on each of 100,000 passes (quadratic copying)",
                "{{$s := \"\"}}{{range .n}}{{$s = printf \"%s%s\" $s \"xxxxxxxxxxxxxxxxxxxx\"}}{{end}}{{len $s}}",
                n.clone(),
                Render,
                "16 × the limit max_output",
            ),
            case(
                "join of a huge separator",
                "{{$s := printf \"%s%s%s%s%s%s%s%s\" .a .a .a .a .a .a .a .a}}{{join $s .n}}",
                json!({"a": "x".repeat(1000), "n": (0..100_000).collect::<Vec<_>>()}),
                Render,
                "max_value_bytes",
            ),
            case(
                "output of 10^10 bytes",
                "{{range .n}}{{range $.n}}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{{end}}{{end}}",
                n,
                Render,
                "max_output",
            ),
        ],
    );
}

/// A chain of 8,000 variables, each a key further into the data: the
/// load-time analysis of what the template reads stays linear (it took
/// 87 s and 1.8 GB).
#[test]
fn a_chain_of_variables_each_a_key_further_loads_in_linear_time() {
    use teleprompt::{LoadOptions, Prompt};
    let _alone = crate::common::exclusive();
    let names = 8_000;
    let mut body = String::from("{{ $a0 := .x }}");
    for i in 1..names {
        body.push_str(&format!("{{{{ $a{i} := $a{}.k }}}}", i - 1));
    }
    body.push_str(&format!("{{{{ $a{} }}}}", names - 1));
    let started = std::time::Instant::now();
    let prompt =
        Prompt::from_source("chain.gotmpl", &body, &LoadOptions::default()).expect("loads");
    let _ = prompt.warnings();
    let inputs = prompt.inputs().expect("its inputs are known");
    assert!(inputs.names().any(|name| name == "x"));
    assert!(
        started.elapsed() < super::budget(),
        "{:?}",
        started.elapsed()
    );
}
