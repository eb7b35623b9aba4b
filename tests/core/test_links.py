"""proctor://item/ID and proctor://run/ID: what the desk, the CLI and the desktop's URL
handler accept, with the ids agents choose (any string) and the links a hostile page or
message may hand over."""

from __future__ import annotations

import pytest

from proctor.core.kernel.links import MAX_ID, BadLink, Link, link_url, parse_link

AGENT_IDS = [
    "apr_01HZX3",
    "int_7",
    "rec_a-b.c~d",
    "deploy prod; rm -rf /",  # an effect key: spaces and ; are data, escaped in the link
    "files/a b/ä€😀",
    "x" * MAX_ID,
    "50%",
    "../../etc/passwd",
]


@pytest.mark.parametrize("ident", AGENT_IDS)
@pytest.mark.parametrize("target", ["item", "run"])
def test_a_link_reads_back_as_the_id_it_was_made_for(target, ident):
    url = link_url(target, ident)
    assert url.startswith(f"proctor://{target}/")
    assert not set(url[len(f"proctor://{target}/") :]) & set(" ;/?#&'\"$`\\")
    assert parse_link(url) == Link(target, ident)
    assert Link(target, ident).url() == url


HOSTILE_IDS = [
    "12\u202e345",  # right-to-left override: reads as another id
    "a\u2066b",  # bidi isolate
    "a\u200bb",  # zero-width space
    "a\nb",
    "a\x1b[31mb",
    "x" * (MAX_ID + 1),
    "",
]


@pytest.mark.parametrize("ident", HOSTILE_IDS)
def test_no_link_is_made_to_an_id_that_would_not_show_as_itself(ident):
    with pytest.raises(BadLink):
        link_url("item", ident)


@pytest.mark.parametrize("ident", HOSTILE_IDS)
def test_an_escaped_hostile_id_is_refused_when_read(ident):
    from urllib.parse import quote

    with pytest.raises(BadLink):
        parse_link("proctor://item/" + quote(ident, safe=""))


@pytest.mark.parametrize(
    "text",
    [
        "proctor://item/apr_1;rm -rf ~",  # a raw ; and spaces
        "proctor://item/apr 1",
        "proctor://item/apr_1\u202e",  # raw bidi
        "proctor://item/apr_1/../run",
        "proctor://item/apr_1?x=1",
        "proctor://item/apr_1#top",
        "proctor://item/%zz",
        "proctor://item/%ff%fe",  # not UTF-8
        "proctor://item/",
        "proctor://item",
        "proctor://rule/rule_1",
        "proctor://ITEM/apr_1",
        "proctor:item/apr_1",
        "https://example.com/item/apr_1",
        "file:///etc/passwd",
        "proctor://item/" + "a" * 20_000,
        "proctor://item/" + "%41" * (MAX_ID + 1),
        "",
    ],
)
def test_anything_else_is_refused_with_a_reason(text):
    with pytest.raises(BadLink) as refused:
        parse_link(text)
    message = str(refused.value)
    assert message
    assert len(message) < 400
    assert "\u202e" not in message and "\n" not in message


def test_the_scheme_is_read_in_any_case():
    assert parse_link("PROCTOR://run/run_1") == Link("run", "run_1")
