"""The block catalog: spec files, discovery, versions, $ref, schema checks, lazy loading."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.config import Settings
from keiri_agent.plans.catalog.catalog import BlockCatalog, BlockSpec, CatalogError, schema_problems
from keiri_agent.plans.catalog.semver import Version, VersionRange

BUILTIN_IDS = {
    "text.normalize",
    "validate.registration_number",
    "csv.read",
    "csv.write",
    "table.join",
    "table.reconcile",
    "table.dedupe",
    "table.compute",
    "text.template",
    "text.join",
    "table.filter",
    "table.sort",
    "table.select",
    "table.aggregate",
    "table.concat",
    "accounting.match_payments",
    "accounting.check_invoice_tax",
    "accounting.export_journal",
    "accounting.zengin_transfer",
    "date.business_day",
}

ECHO_BLOCK = """
from keiri_agent.blocks.base import ProcessingBlock

class EchoBlock(ProcessingBlock):
    def run(self, inputs, ctx):
        return {"text": inputs["text"] * inputs.get("times", 1)}
"""


def spec_data(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": "user.echo",
        "version": "1.0.0",
        "entrypoint": "echo.py:EchoBlock",
        "description": "repeat text",
        "inputs": {
            "text": {"type": "string", "required": True, "examples": ["hi"]},
            "times": {"type": "integer", "default": 1, "minimum": 1},
        },
        "outputs": {"text": {"type": "string"}},
        "dry_run": {"samples": {"inputs": {"text": "hi"}, "outputs": {"text": "hi"}}},
    }
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}


def write_spec(folder: Path, name: str = "echo.yaml", **overrides: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(yaml.safe_dump(spec_data(**overrides), allow_unicode=True), encoding="utf-8")
    return path


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "user_blocks"
    write_spec(folder)
    (folder / "echo.py").write_text(ECHO_BLOCK, encoding="utf-8")
    return folder


@pytest.fixture
def ctx() -> BlockContext:
    return BlockContext(
        run_id="run",
        plan_id="plan",
        node_id="node",
        settings=Settings(),
        logger=logging.getLogger(),
    )


# --- built-ins ------------------------------------------------------------------------


def test_builtin_blocks_are_discovered_with_complete_contracts() -> None:
    catalog = BlockCatalog.discover()
    specs = {spec.id: spec for spec in catalog.specs()}
    assert set(specs) >= BUILTIN_IDS
    for block_id in BUILTIN_IDS:
        spec = specs[block_id]
        assert spec.side_effects is False and spec.kind == "processing"
        assert spec.entrypoint.startswith("keiri_agent.blocks.")
        assert spec.description and spec.source is not None
        folder = spec.category or block_id.split(".")[0]
        assert spec.source.parts[-3:-1] == ("block_specs", folder)
        assert set(spec.dry_run_samples) == {"inputs", "outputs"}
        assert set(spec.dry_run_samples["outputs"]) == set(spec.outputs)
        assert spec.sample_problems() == []
        for port in (*spec.inputs.values(), *spec.outputs.values()):
            assert port.get("description"), (block_id, port)


def test_builtin_samples_run_to_their_declared_outputs(ctx: BlockContext) -> None:
    catalog = BlockCatalog.discover()
    for block_id in sorted(BUILTIN_IDS):
        spec = catalog.resolve(block_id)
        inputs = {**spec.input_defaults(), **spec.dry_run_samples["inputs"]}
        for name in spec.required_inputs():
            assert name in inputs
        for name, value in inputs.items():
            assert schema_problems(value, spec.input_schema(name)) == []
        outputs = catalog.load(spec).run(inputs, ctx)
        assert outputs == spec.dry_run_samples["outputs"], block_id
        for name, value in outputs.items():
            assert schema_problems(value, spec.output_schema(name)) == []


def test_discovery_does_not_import_block_modules() -> None:
    code = (
        "import sys\n"
        "from keiri_agent.plans.catalog.catalog import BlockCatalog\n"
        "catalog = BlockCatalog.discover()\n"
        "mods = ('keiri_agent.blocks.table', 'keiri_agent.blocks.text', 'pandas')\n"
        "print([m for m in mods if m in sys.modules])\n"
        "catalog.load(catalog.resolve('table.sort'))\n"
        "print('keiri_agent.blocks.table' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.split() == ["[]", "True"]


def test_required_inputs_and_defaults() -> None:
    spec = BlockCatalog.discover().resolve("table.sort")
    assert spec.required_inputs() == ["records", "by"]
    assert spec.input_defaults() == {"ascending": True}
    schema = spec.input_schema("by")
    assert "required" not in schema and "default" not in schema
    assert schema["type"] == "array"
    assert spec.to_summary()["reference"] == "table.sort@1.0.0"
    json.dumps(spec.to_summary(resolve_refs=True), ensure_ascii=False)
    with pytest.raises(CatalogError, match="'records' のことですか"):
        spec.input_schema("record")


# --- user folders -----------------------------------------------------------------------


def test_user_dir_with_a_file_entrypoint_loads_lazily(user_dir: Path, ctx: BlockContext) -> None:
    (user_dir / "echo.py").write_text(
        ECHO_BLOCK + "\nimport builtins\nbuiltins.KEIRI_ECHO_IMPORTS = "
        "getattr(builtins, 'KEIRI_ECHO_IMPORTS', 0) + 1\n",
        encoding="utf-8",
    )
    import builtins

    before = getattr(builtins, "KEIRI_ECHO_IMPORTS", 0)
    catalog = BlockCatalog.discover([user_dir])
    spec = catalog.resolve("user.echo")
    assert spec.source == user_dir / "echo.yaml"
    assert getattr(builtins, "KEIRI_ECHO_IMPORTS", 0) == before  # not imported yet
    block = catalog.load(spec)
    assert block.run({"text": "ab", "times": 2}, ctx) == {"text": "abab"}
    catalog.load(spec)
    BlockCatalog.discover([user_dir]).load(spec)
    assert before + 1 == builtins.KEIRI_ECHO_IMPORTS  # type: ignore[attr-defined]


def test_parallel_loads_of_a_slow_file_block_all_succeed(user_dir: Path) -> None:
    (user_dir / "echo.py").write_text("import time\ntime.sleep(0.2)\n" + ECHO_BLOCK, "utf-8")
    catalog = BlockCatalog.discover([user_dir])
    spec = catalog.resolve("user.echo")
    with ThreadPoolExecutor(max_workers=8) as pool:
        blocks = list(pool.map(lambda _: BlockCatalog([spec]).load(spec), range(8)))
    assert len({type(block) for block in blocks}) == 1


def test_module_entrypoint_is_imported_only_by_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "pkgs" / "lazy_user_blocks"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "echo.py").write_text(ECHO_BLOCK, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    folder = tmp_path / "specs"
    write_spec(folder, entrypoint="lazy_user_blocks.echo:EchoBlock")
    catalog = BlockCatalog.discover([folder])
    assert "lazy_user_blocks.echo" not in sys.modules
    block = catalog.load(catalog.resolve("user.echo"))
    assert "lazy_user_blocks.echo" in sys.modules
    assert isinstance(block, ProcessingBlock)
    monkeypatch.delitem(sys.modules, "lazy_user_blocks.echo")
    monkeypatch.delitem(sys.modules, "lazy_user_blocks")


def test_from_settings_resolves_relative_dirs_under_home(keiri_home: Path) -> None:
    write_spec(keiri_home / "my_blocks")
    (keiri_home / "my_blocks" / "echo.py").write_text(ECHO_BLOCK, encoding="utf-8")
    catalog = BlockCatalog.from_settings(Settings(block_spec_dirs=[Path("my_blocks")]))
    assert "user.echo" in catalog.ids()


def test_missing_user_dir_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="がありません"):
        BlockCatalog.discover([tmp_path / "nope"])


@pytest.mark.parametrize(
    ("overrides", "key", "message"),
    [
        ({"id": None}, "id", "missing 'id'"),
        ({"version": None}, "version", "missing 'version'"),
        ({"entrypoint": None}, "entrypoint", "missing 'entrypoint'"),
        ({"version": 1.0}, "version", "not SemVer"),
        ({"version": "v1.0.0"}, "version", "not SemVer"),
        ({"version": "1.0"}, "version", "not SemVer"),
        ({"entry_point": "x:Y"}, "entry_point", "'entrypoint' のことですか"),
        ({"id": "bad id"}, "id", "not a block id"),
        ({"kind": "batch"}, "kind", "not one of processing, ui"),
        ({"side_effects": "no"}, "side_effects", "not true or false"),
        ({"entrypoint": "no colon"}, "entrypoint", "not an entrypoint"),
        ({"entrypoint": "missing.py:EchoBlock"}, "entrypoint", "no file"),
        ({"entrypoint": "../echo.py:EchoBlock"}, "entrypoint", "outside the spec's folder"),
        ({"inputs": ["text"]}, "inputs", "must map port names"),
        ({"inputs": {"text": "string"}}, "inputs.text", "must be a JSON Schema object"),
        ({"inputs": {"text": {"type": "strng"}}}, "inputs.text", "invalid JSON Schema"),
        ({"inputs": {"text": {"type": "array", "items": 3}}}, "inputs.text", "$.items"),
        ({"inputs": {"text": {"required": "yes"}}}, "inputs.text.required", "true/false"),
        ({"inputs": {"text": {"nullable": 1}}}, "inputs.text.nullable", "true or false"),
        ({"inputs": {"a-b": {}}}, "inputs.a-b", "not a port name"),
        ({"inputs": {"n": {"type": "integer", "default": "x"}}}, "inputs.n.default", "整数"),
        ({"inputs": {"n": {"type": "integer", "examples": [1, "x"]}}}, "examples[1]", "整数"),
        ({"outputs": {"text": {"type": "string", "default": ""}}}, "outputs.text.default", ""),
        ({"dry_run": {"sample": {}}}, "dry_run", "only 'samples'"),
        ({"dry_run": {"samples": {"outputs": {"other": 1}}}}, "outputs.other", "not one of"),
        (
            {"dry_run": {"samples": {"outputs": {"text": 1}}}},
            "outputs.text",
            "文字列ではありません",
        ),
        ({"requirements": {}}, "requirements", "must be a list"),
    ],
)
def test_bad_spec_files_name_the_file_and_key(
    user_dir: Path, overrides: dict[str, Any], key: str, message: str
) -> None:
    path = write_spec(user_dir, "bad.yaml", **{"id": "user.bad", **overrides})
    with pytest.raises(CatalogError) as caught:
        BlockCatalog.discover([user_dir])
    assert str(path) in caught.value.message
    assert key in caught.value.message and message in caught.value.message
    assert caught.value.details["file"] == str(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("id: [unclosed\n", "YAML の書き方に誤りがあります（2 行目）"),
        ("", "ファイルが空です"),
        ("- id: a\n", "must hold a mapping"),
        ("a: 1\n---\nb: 2\n", "YAML の書き方に誤り"),
    ],
)
def test_unreadable_spec_files(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "x.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(CatalogError, match=message) as caught:
        BlockCatalog.discover([tmp_path])
    assert str(tmp_path / "x.yaml") in caught.value.message


def test_seed_style_requirements_key_is_accepted(user_dir: Path) -> None:
    write_spec(user_dir, id="user.seed", requirements=[])
    assert "user.seed" in BlockCatalog.discover([user_dir]).ids()


def test_duplicate_versions_name_both_files(user_dir: Path) -> None:
    write_spec(user_dir / "sub", "copy.yaml")
    (user_dir / "sub" / "echo.py").write_text(ECHO_BLOCK, encoding="utf-8")
    with pytest.raises(CatalogError, match="2 か所で定義されています") as caught:
        BlockCatalog.discover([user_dir])
    assert str(user_dir / "echo.yaml") in caught.value.message
    assert str(user_dir / "sub" / "copy.yaml") in caught.value.message


def test_a_builtin_id_and_version_cannot_be_redefined(user_dir: Path) -> None:
    write_spec(user_dir, "clash.yaml", id="text.join")
    with pytest.raises(
        CatalogError, match=r"ブロック text\.join のバージョン 1\.0\.0 が 2 か所で定義"
    ):
        BlockCatalog.discover([user_dir])


# --- versions ---------------------------------------------------------------------------

VERSIONS = ["0.1.0", "0.2.0", "0.2.5", "1.0.0", "1.2.0", "1.2.3", "1.3.0-rc.1", "1.3.0", "2.0.0"]


@pytest.fixture
def versioned() -> BlockCatalog:
    return BlockCatalog(
        BlockSpec(id="demo.block", version=v, entrypoint="m:C") for v in reversed(VERSIONS)
    )


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("demo.block", "2.0.0"),
        ("demo.block@*", "2.0.0"),
        ("demo.block@1.2.3", "1.2.3"),
        ("demo.block@=1.2.0", "1.2.0"),
        ("demo.block@1.2", "1.2.3"),
        ("demo.block@1.x", "1.3.0"),
        ("demo.block@1", "1.3.0"),
        ("demo.block@^1.2", "1.3.0"),
        ("demo.block@^1.2.3", "1.3.0"),
        ("demo.block@^0.2", "0.2.5"),
        ("demo.block@^0.2.1", "0.2.5"),
        ("demo.block@^0.1.0", "0.1.0"),
        ("demo.block@^0", "0.2.5"),
        ("demo.block@~1.2.0", "1.2.3"),
        ("demo.block@~1.2", "1.2.3"),
        ("demo.block@~1", "1.3.0"),
        ("demo.block@>=1.0,<2", "1.3.0"),
        ("demo.block@>=1.0 <2", "1.3.0"),
        ("demo.block@>= 1.0, < 1.3", "1.2.3"),
        ("demo.block@<=1.2", "1.2.3"),
        ("demo.block@>1.2", "2.0.0"),
        ("demo.block@>1.2 <2", "1.3.0"),
        ("demo.block@<1", "0.2.5"),
        ("demo.block@<0.2.5 || ^1.0", "1.3.0"),
        ("demo.block@1.3.0-rc.1", "1.3.0-rc.1"),
        ("demo.block@>=1.3.0-rc.1 <1.3.0", "1.3.0-rc.1"),
        ("demo.block@>=1.2.0 <1.3.0", "1.2.3"),  # pre-releases only when named
        (" demo.block @ ^1 ", "1.3.0"),
    ],
)
def test_version_ranges(versioned: BlockCatalog, reference: str, expected: str) -> None:
    assert versioned.resolve(reference).version == expected


def test_bare_id_takes_the_newest_pre_release_when_there_is_no_release() -> None:
    catalog = BlockCatalog(
        BlockSpec(id="demo.pre", version=v, entrypoint="m:C") for v in ("0.1.0-a", "0.1.0-b")
    )
    assert catalog.resolve("demo.pre").version == "0.1.0-b"


def test_semver_precedence() -> None:
    ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta.2", "1.0.0-beta.11"]
    ordered += ["1.0.0-rc.1", "1.0.0", "1.0.1", "1.10.0", "10.0.0"]
    parsed = [Version.parse(text) for text in ordered]
    assert sorted(reversed(parsed)) == parsed
    assert Version.parse("1.0.0+build.5") == Version.parse("1.0.0")
    assert str(Version.parse("1.2.3-rc.1+b")) == "1.2.3-rc.1+b"
    assert not VersionRange.parse("^1.0").allows(Version.parse("2.0.0-rc.1"))


def test_unknown_block_lists_close_matches(versioned: BlockCatalog) -> None:
    with pytest.raises(CatalogError, match=r"'demo\.block' のことですか"):
        versioned.resolve("demo.blok")


def test_no_version_in_range_lists_the_available_ones(versioned: BlockCatalog) -> None:
    with pytest.raises(CatalogError) as caught:
        versioned.resolve("demo.block@^3")
    assert "範囲 '^3' に合うバージョンがありません" in caught.value.message
    assert "あるバージョン: 0.1.0, 0.2.0, 0.2.5, 1.0.0" in caught.value.message
    assert caught.value.details["available"][-1] == "2.0.0"


@pytest.mark.parametrize(
    "reference",
    ["demo.block@^x.1", "demo.block@", "demo.block@>=1.0-rc", "demo.block@^1.a", "demo.block@~>1"],
)
def test_invalid_ranges(versioned: BlockCatalog, reference: str) -> None:
    with pytest.raises(CatalogError, match="範囲"):
        versioned.resolve(reference)


# --- the spec file model ------------------------------------------------------------


def test_a_spec_may_carry_tags_and_a_category(user_dir: Path) -> None:
    spec = BlockSpec.from_mapping(
        spec_data(tags=["text", "繰り返し"], category="text"), user_dir / "echo.yaml"
    )

    assert (spec.tags, spec.category) == (("text", "繰り返し"), "text")
    assert spec.to_summary()["tags"] == ["text", "繰り返し"]
    plain = BlockSpec.from_mapping(spec_data(), user_dir / "echo.yaml")
    assert (plain.tags, plain.category) == ((), None)
    assert "tags" not in plain.to_summary()


@pytest.mark.parametrize(("key", "value"), [("tags", "text"), ("tags", [1]), ("category", ["a"])])
def test_bad_tags_or_category_name_the_key(user_dir: Path, key: str, value: Any) -> None:
    with pytest.raises(CatalogError) as caught:
        BlockSpec.from_mapping(spec_data(**{key: value}), user_dir / "echo.yaml")

    assert caught.value.details["key"] == key


def test_the_spec_file_model_gives_a_json_schema_that_builtin_specs_fit() -> None:
    from jsonschema import Draft202012Validator

    from keiri_agent.plans.catalog import spec_file_schema

    schema = spec_file_schema()
    Draft202012Validator.check_schema(schema)
    assert {"id", "version", "entrypoint", "tags", "category", "inputs"} <= set(
        schema["properties"]
    )
    assert set(schema["required"]) == {"id", "version", "entrypoint"}
    folder = Path(__file__).parents[2] / "src" / "keiri_agent" / "block_specs"
    validator = Draft202012Validator(schema)
    for path in sorted(folder.rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert not list(validator.iter_errors(data)), path
