"""Render a JSON Lines dataset through one teleprompt prompt with Ray Data.

    python ray_batch.py PROMPT INPUT OUTPUT_DIR [--format text|openai|tokens] [--tokenizer NAME|FILE]
                        [--now RFC3339] [--address auto]

Each input line is the data of one render (a JSON object), as for
``teleprompt batch``; INPUT is a file or a folder of them. OUTPUT_DIR gets
JSON Lines files (Ray's ``write_json``: one file a block, rows in no
particular order across files), one line a row:

    {"index": 7, "path": "rows.jsonl", "output": "You are Ada, ...", "error": null}
    {"index": 8, "path": "rows.jsonl", "output": null, "error": "{\\"rule\\": \\"render\\", ...}"}

``index`` is the row's line in its file, from 0 (as ``teleprompt batch``
numbers it), ``path`` the file; ``output`` is the text, or with ``--format
openai`` the OpenAI body as JSON text, or with ``--format tokens`` the
row's tokens as JSON text (``Rendered.tokens()``: for a chat template the
``ids`` of ``apply_chat_template(tokenize=True)`` and, where the template
has ``{% generation %}`` blocks, its ``assistant_masks`` — a fine-tuning
dataset); ``error`` is the error's ``to_dict()`` as JSON text, the same
object ``teleprompt batch`` writes.

The tokenizer is the prompt's (front matter ``tokenizer:``, a chat
template's ``tokenizer.json`` beside it) or ``--tokenizer``; a
``tokenizer.json`` must be where every worker reads it (each parses it
once).

When to use it: when there are more rows than one machine renders in the
time you have. On one machine ``teleprompt batch --jobs N`` is several times
faster than this script (see bench/README.md, "Batch on Ray"): Ray adds its
start-up, moving blocks between processes, and Python for every row
(parsing the JSON, building the output). It pays off once it spreads the
rows over many machines.

On a cluster: start Ray on every node (``ray start --head`` on one,
``ray start --address=HEAD:6379`` on the others), install teleprompt and
``ray[data]`` on each, put INPUT and OUTPUT_DIR where every node reads and
writes (S3, GCS, a shared file system), and run this script on a node of
the cluster with ``--address auto``: it then calls
``ray.init(address="auto")`` and the rows are rendered on every node.

Tested with ray[data]==2.60.0.
"""

import argparse
import datetime
import json
import math
from typing import Any, Dict, Iterator, List, NoReturn, Optional, Union

import pyarrow as pa
import ray
from ray.data.datasource import FileBasedDatasource

from teleprompt import InputError, Prompt, PromptContext, Rendered, TelepromptError

# The output's columns, typed once: a block whose rows all rendered would
# otherwise get an `error` column of type null.
OUTPUT = pa.schema([("index", pa.int64()), ("path", pa.string()), ("output", pa.string()), ("error", pa.string())])
JSON_TYPES = {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean"}


class JsonLines(FileBasedDatasource):
    """The lines of JSON Lines files as rows ``{index, line, path}``, the line as bytes.

    Why not ``ray.data.read_json``: Arrow infers one type a column for all
    rows (a field that is a number in one row and a string in the next
    fails or is converted), and the batches hold numpy values, which
    teleprompt refuses: it takes dict, list, str, int, float, bool and None.
    Why not ``ray.data.read_text``: it drops blank lines and also splits at
    Unicode line breaks (U+2028 may stand raw in a JSON string), so its rows
    are not the file's lines, and it does not number them. Here a line is
    what ends at "\\n", numbered as ``teleprompt batch`` numbers it, and
    ``json.loads`` in the render step gives each row its exact JSON types
    as plain Python objects.
    """

    CHUNK = 8 << 20  # bytes read at a time: a block is about this size

    def _read_stream(self, f: Any, path: str) -> Iterator[pa.Table]:
        number, tail = 0, b""
        while chunk := f.read(self.CHUNK):
            lines = (tail + chunk).split(b"\n")
            tail = lines.pop()  # after the last newline: not a whole line yet
            yield pa.table({"index": range(number, number + len(lines)), "line": pa.array(lines, pa.binary())})
            number += len(lines)
        if tail:  # a last line without a newline
            yield pa.table({"index": [number], "line": pa.array([tail], pa.binary())})


def parse(line: bytes, index: int, path: str) -> Union[Dict[str, Any], InputError]:
    """The data of one line, or the InputError it is: the error object
    ``teleprompt batch`` writes for that line (its JSON messages are
    Python's words, not serde's)."""

    def error(kind: str, message: str, column: Optional[int] = None) -> InputError:
        rule = f"input/{kind}"
        details: Dict[str, Any] = {"rule": rule, "class": "input", "message": message, "file": path,
                                   "line": index + 1, "column": column, "end": None, "path": None, "labels": {}}
        return InputError(message, rule=rule, file=path, line=index + 1, column=column, details=details)

    if not line.strip():
        return error("blank-line", "the line is blank: every line must be a JSON object, the data of one render")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as problem:
        column = len(line[: problem.start].decode("utf-8")) + 1
        return error("not-utf8", f"the line is not UTF-8 text (byte 0x{line[problem.start]:02X})", column)
    try:
        data = json.loads(text, parse_float=finite, parse_constant=not_json)
    except json.JSONDecodeError as problem:
        return error("json", f"invalid JSON: {problem.msg}", problem.colno)
    except ValueError as problem:  # from finite or not_json
        return error("json", f"invalid JSON: {problem}")
    if not isinstance(data, dict):
        kind = JSON_TYPES.get(type(data), "null")
        return error("not-object", f"the line is {kind}: every line must be a JSON object, the data of one render")
    return data


def finite(text: str) -> float:
    """A JSON number as a float; 1e400 is an error, as in ``teleprompt batch``, not infinity."""
    number = float(text)
    if math.isinf(number):
        raise ValueError("number out of range")
    return number


def not_json(text: str) -> NoReturn:
    """NaN and Infinity, which Python's json reads and JSON has not."""
    raise ValueError(f"{text} is not JSON")


def render_batch(batch: pa.Table, prompt: Prompt, now: str, output_format: str) -> pa.Table:
    """Renders one block of lines, in a Ray worker (`prompt` was unpickled there)."""
    indexes, paths = batch.column("index").to_pylist(), batch.column("path").to_pylist()
    parsed = [parse(line, index, path) for line, index, path in zip(batch.column("line").to_pylist(), indexes, paths)]
    rows = [row for row in parsed if isinstance(row, dict)]
    # Rendered as `teleprompt batch` renders a row: a turn with the row as
    # data and one clock for every row (`system.*`). One call a block, on
    # one thread: Ray runs one worker a core.
    tokens = output_format == "tokens"
    rendered = iter(prompt.render_many(rows, jobs=1, errors="return", now=now, tokenize=tokens))
    outputs: List[Optional[str]] = []
    errors: List[Optional[str]] = []
    for row in parsed:
        result = next(rendered) if isinstance(row, dict) else row
        if isinstance(result, TelepromptError):
            outputs.append(None)
            errors.append(json.dumps(result.to_dict(), ensure_ascii=False))
        else:
            if not isinstance(result, Rendered):  # the row's tokens (a dict)
                outputs.append(json.dumps(result, separators=(",", ":")))
            elif output_format == "openai":
                outputs.append(json.dumps(result.to_openai(), ensure_ascii=False))
            else:
                outputs.append(result.text)
            errors.append(None)
    return pa.table({"index": indexes, "path": paths, "output": outputs, "error": errors}, schema=OUTPUT)


def run(prompt: Prompt, input: str, output: str, now: str, output_format: str = "text") -> None:
    """The pipeline, on the Ray that ``ray.init`` started or joined."""
    (
        ray.data.read_datasource(JsonLines(input, include_paths=True))
        .map_batches(
            render_batch,
            # Pickled once with the task and unpickled in each worker: the
            # Prompt travels as its text and options, compiled again there.
            fn_kwargs={"prompt": prompt, "now": now, "output_format": output_format},
            batch_format="pyarrow",  # Arrow columns, read with to_pylist(): plain Python values
            batch_size=None,  # a whole block at a time, as read
        )
        .write_json(output, force_ascii=False)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prompt", help="the prompt file")
    parser.add_argument("input", help="the rows: a JSON Lines file or a folder of them (any path Ray reads)")
    parser.add_argument("output", help="the output folder")
    parser.add_argument("--format", choices=["text", "openai", "tokens"], default="text")
    parser.add_argument("--tokenizer", help="what counts tokens (o200k_base, cl100k_base, or a tokenizer.json), over the prompt's own")
    parser.add_argument("--now", help="the time of every row, RFC 3339 (default: when the run starts)")
    parser.add_argument("--address", help='a running cluster: "auto", or HOST:PORT (default: a local Ray)')
    args = parser.parse_args()

    # Loaded once, here: a bad template fails now, not in every worker.
    prompt = Prompt.from_file(args.prompt, tokenizer=args.tokenizer)
    # One time for every row, taken here, as `teleprompt batch` does: the
    # workers' clocks and the hours a long run takes do not change it.
    now = args.now or datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    PromptContext(now=now)  # a bad --now fails here too
    ray.init(address=args.address)
    run(prompt, args.input, args.output, now, args.format)


if __name__ == "__main__":
    main()
