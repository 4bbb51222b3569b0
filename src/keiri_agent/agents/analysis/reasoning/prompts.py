"""Prompt templates of the LLM reasoner (rendered with strict placeholder checks) and the
compact form of the spec vocabulary they carry (``compact_vocabulary``)."""

from __future__ import annotations

import json
import re
from typing import Any

REASON_SYSTEM = """\
You are the `reason` step of a data-analysis agent for Japanese back-office and accounting teams.
You never write or run code. You decide the next action and, for `act`, write ONE structured spec
that template code will run on the user's in-memory dataset.

next_action:
- ask: information is missing (which column, metric, granularity, filter) or no dataset is loaded.
  Put minimal questions in clarifying_questions; offer assumptions when a default is reasonable.
- act: give exactly one analysis_spec OR one plot_spec (the other null).
- out_of_scope: the request needs something outside this vocabulary (prediction/forecast models,
  machine learning, web access, external data not in the file such as weather or stock prices,
  writing files, sending data). After an out_of_scope reply in this turn, act on the in-scope part
  of the request; when nothing in scope is left, answer out_of_scope again (the turn ends on the
  refusal and its alternatives).
- finalize: the actions run in this turn answer the request; the report will be written.

Rules:
- Use column names exactly as in the dataset summary; never invent columns.
- The latest user message is a new request when it is complete by itself; only an answer to your
  last question (a column, a yes/no, "by region") completes the earlier request. A request to
  write up / summarise the results as a report is finalize (ask only when nothing ran yet).
- Do not repeat an action that already ran in this turn. One request may need several specs:
  run them one per step, then finalize.
- When last_error is set, read it: fix the spec (use the suggested column or op, relax filters, pick
  another plot or aggregation) or ask the user; never repeat the same failing spec.
- Filters are combined with AND; dates are strings like "2025-01-01".
- One number asked for (how many, the total, the average of the rows that ...) is a "total"
  spec with the conditions as filters, never a grouping nobody asked for.
- A message right after a finished result that only changes it ("それを営業部だけで",
  "部署別に", "月別に", "グラフにして", "now by channel", "only for 2025") is a follow-up: take
  the previous request's spec and change only what the message says (add or replace a
  filter, split a total by the group, another aggregation or top_k, a line per month of
  the same measure, a bar chart of a grouped result).
- Answer (questions, rationale) in the language of the user's request.
- A wide dataset's summary lists the columns that the request names or resembles in full
  ("columns") and the others by name under their kind ("other_columns"), with the values of
  some low-cardinality ones ("other_values"); any listed column may be used. An entry like
  "売上_{{n}}_金額 (n=1..3,7)" lists a numbered series: 売上_1_金額, 売上_2_金額, 売上_3_金額,
  売上_7_金額 (write the column name with the number in place of {{n}}).

The spec vocabulary. `field?` is optional, `= x` its default, `A|B` a choice, `[T]` a list,
`{{column: T}}` an object keyed by column names. Every spec may also have "filters": [Filter].
Analysis specs: {{"type": "analysis", "op": <op>, ...fields}}:
{analysis_vocabulary}

Plot specs: {{"type": "plot", "kind": <kind>, "title"?: str, ...fields}}:
{plot_vocabulary}
"""

REASON_CONTEXT = """\
Dataset summary:
{dataset_summary}

Artifacts produced so far (id, kind, title, description):
{artifacts}

Actions already run in this turn:
{turn_actions}

Specs that answered the previous request (a follow-up edits them):
{previous_specs}

last_error:
{last_error}
"""

_SHARED_FIELDS = frozenset({"type", "dataset_id", "filters", "title"})


def _describe(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("``", "`")).strip()


def _type(node: dict[str, Any]) -> tuple[str, bool]:
    """(compact type, nullable) of a JSON Schema node."""
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1], False
    if "anyOf" in node:
        kinds = [item for item in node["anyOf"] if item.get("type") != "null"]
        rendered = " | ".join(_type(item)[0] for item in kinds)
        return rendered, len(kinds) < len(node["anyOf"])
    if "const" in node:
        return json.dumps(node["const"], ensure_ascii=False), False
    if "enum" in node:
        return "|".join(json.dumps(v, ensure_ascii=False) for v in node["enum"]), False
    kind = node.get("type")
    if kind == "array":
        return f"[{_type(node.get('items', {}))[0]}]", False
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"{{column: {_type(node['additionalProperties'])[0]}}}", False
    bounds = ""
    if "minimum" in node and "maximum" in node:
        bounds = f" {node['minimum']}..{node['maximum']}"
    elif "minimum" in node:
        bounds = f" >= {node['minimum']}"
    names = {"string": "str", "integer": "int", "number": "number", "boolean": "bool"}
    return (names.get(str(kind), "any") if kind else "any") + bounds, False


def _fields(definition: dict[str, Any], skip: frozenset[str]) -> str:
    required = set(definition.get("required", []))
    parts = []
    for name, node in definition.get("properties", {}).items():
        if name in skip:
            continue
        rendered, nullable = _type(node)
        optional = name not in required or nullable
        default = node.get("default")
        shown = f" = {json.dumps(default, ensure_ascii=False)}" if default not in (None, []) else ""
        parts.append(f"{name}{'?' if optional else ''}: {rendered}{shown}")
    return ", ".join(parts)


def compact_vocabulary(schema: dict[str, Any], *, known: frozenset[str] = frozenset()) -> str:
    """A discriminated-union JSON Schema (a spec vocabulary) as one line per variant
    (``- tag: description | fields``) and one per shared type it refers to (``Filter``,
    ``Sort``): the same fields, types, choices and defaults in about a quarter of the JSON.
    Fields every spec shares (type, dataset_id, filters, title) are left to the prompt, and
    shared types in ``known`` (already described by another vocabulary) are not repeated."""
    defs = schema.get("$defs", {})
    tag = schema["discriminator"]["propertyName"]
    mapping = schema["discriminator"]["mapping"]
    variants = [str(item["$ref"]).rsplit("/", 1)[-1] for item in schema["oneOf"]]
    lines = []
    for value, ref in mapping.items():
        definition = defs[str(ref).rsplit("/", 1)[-1]]
        fields = _fields(definition, _SHARED_FIELDS | {tag})
        description = _describe(definition.get("description", ""))
        lines.append(f"- {value}: {description}" + (f" | {fields}" if fields else ""))
    for name, definition in defs.items():
        if name not in variants and name not in known:
            description = _describe(definition.get("description", ""))
            lines.append(f"{name}: {{{_fields(definition, frozenset())}}} ({description})")
    return "\n".join(lines)
