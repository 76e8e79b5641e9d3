//! Hostile Handlebars templates: each stops with a clear error within the
//! budget (see the runner, `hostile/mod.rs`). The cases of issue 7 and the
//! shapes next to them, with Semantic Kernel's helpers too.

use super::{case, many_keys, run};
use serde_json::json;
use teleprompt::ErrorClass::{Parse, Render};
use teleprompt::Syntax;

#[test]
fn hostile_handlebars_templates_stop_within_the_budget() {
    let n = json!({"n": (0..100_000).collect::<Vec<_>>()});
    let mut tree = String::new();
    for level in 0..10 {
        tree.push_str(&format!("{{{{#*inline \"t{level}\"}}}}"));
        if level == 9 {
            tree.push('x');
        } else {
            tree.push_str(&format!("{{{{> t{}}}}}", level + 1).repeat(10));
        }
        tree.push_str("{{/inline}}");
    }
    tree.push_str("{{> t0}}");
    run(
        Syntax::Handlebars,
        vec![
            // A message per pass: the messages of one render are a list too.
            case("200,000 messages", "{{#each list}}{{role \"user\"}}x{{/each}}", json!({"list": vec![0; 200_000]}), Render, "messages and media parts"),
            // Steps count the text a helper reads: `equals` of two long
            // strings on every pass of a long loop.
            case("equals of two 1 MB strings in a loop of 100,000", "{{#each list}}{{#if (equals @root.a @root.b)}}x{{/if}}{{/each}}", json!({"list": vec![0; 100_000], "a": "a".repeat(1 << 20), "b": "a".repeat(1 << 20)}), Render, "max_steps"),
            // A did-you-mean looks through every key (the data sits under
            // the prompt's own layers: they merged in quadratic time).
            case("a missing name among 100,000 top-level keys", "{{missing_name}}", many_keys(100_000), Render, "missing_name"),
            case(
                "blocks 10,000 deep",
                format!("{}x{}", "{{#if a}}".repeat(10_000), "{{/if}}".repeat(10_000)),
                json!({"a": true}),
                Parse,
                "max_nesting",
            ),
            case(
                "subexpressions 10,000 deep",
                format!("{{{{ concat {}1{} }}}}", "(concat ".repeat(10_000), ")".repeat(10_000)),
                json!({}),
                Parse,
                "max_nesting",
            ),
            case(
                "inline partials calling each other 10^9 times",
                tree,
                json!({}),
                Render,
                "max_steps",
            ),
            case(
                "a partial calling itself without end",
                "{{#*inline \"loop\"}}{{> loop}}{{/inline}}{{> loop}}",
                json!({}),
                Render,
                "max_call_depth",
            ),
            case(
                "nested each of 10^10 passes",
                "{{#each n}}{{#each ../n}}{{/each}}{{/each}}",
                n.clone(),
                Render,
                "max_steps",
            ),
            case(
                "SK set doubling a string with concat",
                "{{set \"s\" \"ab\"}}{{#each n}}{{set \"s\" (concat s s)}}{{/each}}{{s}}",
                n.clone(),
                Render,
                "max_value_bytes",
            ),
            case(
                // Quadratic copying: the text each `concat` reads counts as
                // steps, which run out before the built text's total does.
                "SK set growing a string on each of 100,000 passes (quadratic copying)",
                "{{set \"s\" \"\"}}{{#each n}}{{set \"s\" (concat s \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\")}}{{/each}}{{s}}",
                n.clone(),
                Render,
                "max_steps",
            ),
            case(
                "SK set doubling a list with array",
                "{{set \"l\" (array 1)}}{{#each n}}{{set \"l\" (array l l)}}{{/each}}",
                n.clone(),
                Render,
                "max_items",
            ),
            case(
                "SK range of 10^9 numbers",
                "{{#each (range 1 1000000000)}}{{/each}}",
                json!({}),
                Render,
                "max_items",
            ),
            case(
                "json of a huge value",
                "{{set \"s\" (concat n n n n n n n n n n n n n n n n)}}{{json (array s s s s s s s s s s s s s s s s)}}",
                json!({"n": "\"".repeat(200_000)}),
                Render,
                "max_value_bytes",
            ),
            case(
                "output of 10^10 bytes",
                "{{#each n}}{{#each ../n}}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{{/each}}{{/each}}",
                n.clone(),
                Render,
                "max_output",
            ),
            case(
                "a bare helper name over 10^10 contexts without the key",
                "{{#each n}}{{#each ../n}}{{role}}{{/each}}{{/each}}",
                n,
                Render,
                "the data has no key \"role\"",
            ),
            case(
                "a bare helper name printing 1 KiB of data 100,000 times",
                "{{role}}{{json}}".repeat(100_000),
                json!({"role": "x".repeat(1024), "json": "y"}),
                Render,
                "max_output",
            ),
        ],
    );
}
