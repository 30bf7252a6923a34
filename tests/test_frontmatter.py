"""Parsing node files: the frontmatter fast path agrees with PyYAML; headers and sections."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest
import yaml
from frontmatter.default_handlers import YAMLHandler
from hypothesis import given, settings
from hypothesis import strategies as st
from yaml.resolver import Resolver

from monkeyllm import nodes, yamlfast
from monkeyllm.nodes import ParseError, parse_text

from .forestkit import SAMPLE

scalars = st.one_of(
    st.text(max_size=120),
    st.integers(-(10**6), 10**6),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.dates(min_value=datetime.date(1900, 1, 1), max_value=datetime.date(2100, 1, 1)),
    st.sampled_from(
        [
            "yes",
            "No",
            "on",
            "~",
            "null",
            "007",
            "1_000",
            "0x1f",
            "1:30",
            ".5",
            "2026-05-04",
            "2026-05-04T10:00:00",
            "a: b",
            "x #y",
            "- z",
            "'q'",
            "C#",
            "e-mail",
            "NF-4412",
            "ação",
            "=",
            "<<",
            "1e5",
            "",
        ]
    ),
)
keys = st.one_of(
    st.from_regex(r"[a-z_][a-z0-9_-]{0,12}", fullmatch=True),
    st.sampled_from(["on", "yes", "1", "null", "true", "id", "links"]),
)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=4),
    st.lists(st.dictionaries(keys, scalars, min_size=1, max_size=3), max_size=3),
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(keys, values, max_size=8), st.sampled_from([40, 80, 200]))
def test_fast_path_agrees_with_pyyaml(data: dict, width: int) -> None:
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=width)
    fast = yamlfast.load(text)
    if fast is not None:
        assert fast == yaml.safe_load(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab:-'\" #\n\t[]{}1.\\", max_size=60))
def test_fast_path_never_accepts_what_pyyaml_reads_differently(text: str) -> None:
    fast = yamlfast.load(text)
    if fast is None:
        return
    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError:
        pytest.fail(f"fast path accepted invalid YAML: {text!r} -> {fast!r}")
    assert fast == (expected if expected is not None else {})


def test_fast_path_reads_every_sample_brain_file() -> None:
    files = sorted(SAMPLE.rglob("*.md"))
    assert len(files) > 40
    for path in files:
        text = path.read_text(encoding="utf-8")
        fm = text.split("\n---\n", 1)[0][4:]
        fast = yamlfast.load(fm)
        assert fast is not None, path
        assert fast == yaml.safe_load(fm), path


def test_the_boundary_line_is_python_frontmatters() -> None:
    theirs = YAMLHandler.FM_BOUNDARY
    assert (nodes.BOUNDARY.pattern, nodes.BOUNDARY.flags) == (theirs.pattern, theirs.flags)


def test_pyyaml_is_consulted_for_every_scalar_it_could_resolve() -> None:
    """Outside RESOLVED_FIRST, PyYAML's implicit resolvers are for indicators (refused
    before) or for exactly the null and boolean words the fast path reads itself."""
    handled = set(yamlfast._BOOLS) | yamlfast._NULLS
    for first, resolvers in Resolver.yaml_implicit_resolvers.items():
        if first in yamlfast.RESOLVED_FIRST or first in yamlfast._INDICATORS or first == "":
            continue
        for tag, regexp in resolvers:
            assert tag.rsplit(":", 1)[1] in ("bool", "null"), (first, tag)
            assert set(re.findall(r"[A-Za-z]+|~", regexp.pattern)) <= handled, tag


_RESOLVED = [
    regexp
    for first, resolvers in Resolver.yaml_implicit_resolvers.items()
    if first in yamlfast.RESOLVED_FIRST
    for _, regexp in resolvers
]


@settings(max_examples=300, deadline=None)
@given(st.one_of(*(st.from_regex(r) for r in dict.fromkeys(_RESOLVED))))
def test_what_pyyaml_resolves_passes_the_resolvable_screen(text: str) -> None:
    text = text.rstrip("\n")  # "$" admits one; a scalar of the fast path has none
    if text and text[0] in yamlfast.RESOLVED_FIRST:
        assert yamlfast.RESOLVABLE.fullmatch(text), text


BODY = """# Title

> The blockquote summary.

## One

```python
# not a header
## nor this
```

### One point one

~~~
# still code
~~~

## Two ##
"""


_H2_H3 = re.compile(r"^#{2,3}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(["##", "###", "####", "#", " ", "\t", "\r", "a", "b c", "##x", "\n", "é"]),
        max_size=40,
    ).map("".join)
)
def test_the_outline_without_fences_is_every_h2_and_h3_line(body: str) -> None:
    """The outline of a body without fences, found by searching for "\\n##", is what
    matching every line against the header pattern finds, on any mix of hashes,
    blanks, carriage returns and text."""
    expected = [m.group(1) for line in body.split("\n") if (m := _H2_H3.match(line)) and m.group(1)]
    assert nodes.Node("x", {}, body).outline == expected


def test_headers_skip_fenced_code_and_trailing_hashes() -> None:
    node = parse_text("x", "---\nid: x\n---\n\n" + BODY)
    assert node.outline == ["One", "One point one", "Two"]
    assert [h.line for h in node.headers] == [0, 4, 11, 17]
    assert node.title == "Title" and node.summary == "The blockquote summary."
    assert node.section("one point")[0].text == "One point one"
    header, text = node.section("One")
    assert "# not a header" in text and "One point one" in text and "Two" not in text
    assert node.section_of_line(12) == "One point one"


@pytest.mark.parametrize(
    "text, reason",
    [
        ("no frontmatter", "no frontmatter"),
        ("---\ntitle: x\n", "unterminated"),
        ("---\ntitle: [x\n---\n", "bad YAML"),
        ("---\n- a\n---\n", "not a mapping"),
        ("---\nx: 1\n---\n\x00", "binary"),
    ],
)
def test_parse_errors_say_why(text: str, reason: str) -> None:
    with pytest.raises(ParseError, match=reason):
        parse_text("x", text)


def test_crlf_and_bom(tmp_path: Path) -> None:
    node = parse_text("x", "\ufeff---\r\nid: x\r\ntitle: T\r\n---\r\n\r\n# T\r\n\r\nbody\r\n")
    assert node.meta["title"] == "T"
    assert node.title == "T"
