"""The replica of transformers' `_compile_jinja_template`, shared by
bench/jinja/compare.py and bench/jinja/fixtures.py (which check it against
transformers when transformers is installed) and bench/all/jinja2_bench.py."""

from __future__ import annotations

import json
from datetime import datetime


def compile_replica(source: str, now: datetime | None = None):
    """transformers' `_compile_jinja_template` (utils/chat_template_utils.py),
    reduced to what shapes rendering: the environment, the `{% generation %}`
    tag (a call block that returns its body), `tojson`, `raise_exception`,
    `strftime_now` (at `now` if given, as the fixtures' fixed clock; else
    the system clock's). transformers 5 also replaces the `dict` and
    `namespace` globals with sandbox-hardened versions; the Llama templates
    use neither."""
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class AssistantTracker(jinja2.ext.Extension):
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return jinja2.nodes.CallBlock(
                self.call_method("_generation_support"), [], [], body
            ).set_lineno(lineno)

        @jinja2.pass_eval_context
        def _generation_support(self, context, caller):
            return caller()

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(
            x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )

    def strftime_now(format):
        return (now or datetime.now()).strftime(format)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[AssistantTracker, jinja2.ext.loopcontrols],
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(source)
