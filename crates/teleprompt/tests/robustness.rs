//! No input may panic the loader or the renderer: a deterministic stream of
//! mangled prompts goes through `Prompt::from_source` and `render`.

use teleprompt::{LoadOptions, Prompt, Strictness, Syntax};

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const PIECES: &[&str] = &[
    "---\n",
    "---",
    "\r\n",
    "\n",
    "\u{feff}",
    "name: x\n",
    "strict: lenient\n",
    "strict: 7\n",
    "input:\n  default:\n    a.b: 1\n",
    "syntax: jinja\n",
    "on_error: original\n",
    "- a\n",
    "key: [unclosed\n",
    "{{",
    "}}",
    "{%",
    "%}",
    "{#",
    "#}",
    "{{ a.b }}",
    "{{ a | upper }}",
    "{{ a | nope }}",
    "{% if a %}",
    "{% endif %}",
    "{% for x in a %}",
    "{% endfor %}",
    "{% autoescape off %}",
    "{% endautoescape %}",
    "{{ x.y.z }}",
    "{{ range(3) }}",
    "é",
    "\t",
    "{{ 'str' ",
    "{% raw %}",
    "{% endraw %}",
    "{{ a[0] }}",
    "{{ a[-1] }}",
    "{{ a | tojson }}",
    "{% set a = 1 %}",
    "{% macro m() %}",
    "{% endmacro %}",
    "{{ m() }}",
    " ",
    "x",
    "{% generation %}",
    "{% endgeneration %}",
    "{{ a | tojson(indent=2, sort_keys=true) }}",
    "{{ a | indent(4, true) }}",
    "{{ strftime_now('%d %B %Y') }}",
    "{% if f is defined %}{{ f() }}{% endif %}",
    "{{ raise_exception('no') }}",
    "{{ a|default:\"x\" }}",
    "{{ forloop.Counter }}",
    "{% empty %}",
    "{% ifequal a 1 %}",
    "{% endifequal %}",
    "{% firstof a x \"z\" %}",
    "{{ 1.5 }}{{ none }}{{ [1, 'a'] }}",
    "jinja:\n  trim_blocks: true\n",
];

#[test]
fn mangled_prompts_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let data = serde_json::json!({"a": {"b": [1, "two", null, {"c": 3.5}]}, "x": {"y": {}}});
    for case in 0..6000 {
        let length = rng.below(12);
        let source: String = (0..length)
            .map(|_| PIECES[rng.below(PIECES.len())])
            .collect();
        let strict = [Strictness::Strict, Strictness::Semi, Strictness::Lenient][case % 3];
        let syntax = [Syntax::Jinja, Syntax::ChatTemplate, Syntax::Django][(case / 3) % 3];
        let options = LoadOptions {
            syntax: Some(syntax),
            strict: Some(strict),
            ..LoadOptions::default()
        };
        if let Ok(prompt) = Prompt::from_source("fuzz.md", &source, &options) {
            if let Err(error) = prompt.render(data.clone()) {
                // Reports must build for any error, too.
                assert!(!error.report().is_empty());
            }
        } else if let Err(error) = Prompt::from_source("fuzz.md", &source, &options) {
            assert!(!error.report().is_empty(), "{source:?}");
        }
    }
}
