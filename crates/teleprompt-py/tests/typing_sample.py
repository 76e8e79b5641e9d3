"""Uses the API as a typed program would: `mypy --strict` checks it against the stubs (test_stubs.py)."""

import datetime
from teleprompt import Library, Prompt, PromptContext, Rendered, RenderError, TelepromptError

p: Prompt = Prompt("Hi {{ name }}", name="hi.j2", syntax="jinja")
r: Rendered = p.render({"name": "Ann"}, extra=1)
text: str = r.text
body = r.to_openai()
ctx = PromptContext({"a": 1}, history=[{"role": "user", "content": "x"}], now=datetime.datetime.now(datetime.timezone.utc), turn=2)
r2 = p.render_turn(ctx, validate_history=False)
many = p.render_many([{"name": "x"}], jobs=2)
for item in p.render_many([{"name": "x"}], errors="return"):
    if isinstance(item, TelepromptError):
        print(item.path, item.line)
    else:
        print(item.text)
counted = Prompt("Hi {{ name }}", name="hi.j2", tokenizer="o200k_base").render_many([{"name": "x"}], tokenize=True)
ids: list[int] = counted[0]["messages"][0]["ids"]
lib = Library("examples/rapida")
q = lib.get("x")
names = list(lib)
try:
    p.render()
except RenderError as e:
    print(e.report(), e.suggestion)
