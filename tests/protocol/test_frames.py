"""One line of stdio as the guard reads it: a line the SDK can read is handed on as the SDK parsed
it; any other gets the refusal JSON-RPC 2.0 asks for, with its code, the request's id when it has a
usable one, and one plain sentence; a notification or a response is never answered; a lone
surrogate is replaced, never passed on (docs/contracts.md, "Frames"). The whole server on these
lines is tests/promises/test_frames.py."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Sequence

import anyio
import pytest
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)

from protocol.frames import BATCH, Refusal, guard, read


def one_sentence(message: str) -> bool:
    """One plain sentence: a full stop at the end and nowhere else a sentence could end."""
    return message.endswith(".") and ". " not in message and "\n" not in message


def refusals_of(line: str) -> list[Refusal]:
    """The refusals `read` gives for `line` (failing if it reads the line as a message)."""
    frame = read(line)
    assert isinstance(frame, list), frame
    return frame


def the_refusal(line: str) -> Refusal:
    """The one refusal `read` gives for `line`."""
    (only,) = refusals_of(line)
    return only


# --- what the SDK reads is handed on ---------------------------------------------------------------


def test_a_request_is_handed_on_as_the_sdk_parsed_it() -> None:
    message = read('{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"c1"}}')
    assert isinstance(message, JSONRPCRequest)
    assert (message.id, message.method, message.params) == (7, "tools/list", {"cursor": "c1"})


def test_a_notification_is_handed_on_as_a_notification() -> None:
    message = read('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert isinstance(message, JSONRPCNotification) and message.method == "notifications/initialized"


def test_a_notification_whose_params_hold_an_id_stays_a_notification() -> None:
    """`"id"` in the line sends it through the second reading, which finds no id of the message's own."""
    message = read('{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":1,"progress":2}}')
    assert isinstance(message, JSONRPCNotification) and message.params == {"id": 1, "progress": 2}


def test_a_response_from_the_client_is_handed_on() -> None:
    message = read('{"jsonrpc":"2.0","id":"s1","result":{}}')
    assert isinstance(message, JSONRPCResponse) and message.id == "s1"


def test_a_string_id_and_an_escaped_character_are_read_as_written() -> None:
    message = read('{"jsonrpc":"2.0","id":"r\\u00e9q","method":"ping"}')
    assert isinstance(message, JSONRPCRequest) and message.id == "réq"


# --- refusals: parse errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "Parse error: the line is not valid JSON (the fault is at character 2)."),
        (
            '{"jsonrpc":"2.0","id":1,"method":"ping"',
            "Parse error: the line is not valid JSON (the fault is at character 40).",
        ),
        (
            '{"jsonrpc":"2.0","id":1,"method":"ping"} x',
            "Parse error: the line is not valid JSON (the fault is at character 42).",
        ),
        (
            '{"jsonrpc":"2.0","id":' + "1" * 5000 + ',"method":"x"}',
            "Parse error: the line holds a number too long to be read.",
        ),
        ('{"q":' + "[" * 5000 + "]" * 5000 + "}", "Parse error: the line nests too deeply to be read."),
    ],
    ids=["not-json", "truncated", "trailing-text", "number-too-long", "too-deep"],
)
def test_a_line_that_is_not_json_is_a_parse_error_with_no_id(line: str, message: str) -> None:
    answer = the_refusal(line)
    assert (answer.code, answer.id, answer.answered) == (PARSE_ERROR, None, True)
    assert answer.message == message and one_sentence(answer.message)


# --- refusals: not a request object ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "kind"),
    [("42", "a number"), ("4.5", "a number"), ("null", "null"), ('"tools/list"', "a string"), ("true", "a boolean")],
)
def test_a_value_that_is_not_an_object_is_an_invalid_request_naming_what_it_is(line: str, kind: str) -> None:
    answer = the_refusal(line)
    assert (answer.code, answer.id) == (INVALID_REQUEST, None)
    assert answer.message == f"Invalid Request: the message is {kind}, not a request object."


def test_an_empty_array_is_one_invalid_request() -> None:
    answer = the_refusal("[]")
    assert (answer.code, answer.id) == (INVALID_REQUEST, None)
    assert answer.message == "Invalid Request: the message is an empty array, not a request object."


def test_a_batch_gets_one_refusal_per_element_answered_as_each_would_be() -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 31, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "b32", "method": "ping"},
        {"jsonrpc": "2.0", "id": 33, "result": {}},
        7,
    ]
    answers = refusals_of(json.dumps(batch))
    assert [(a.code, a.id, a.answered) for a in answers] == [
        (INVALID_REQUEST, 31, True),
        (INVALID_REQUEST, None, False),  # a notification: never answered
        (INVALID_REQUEST, "b32", True),
        (INVALID_REQUEST, 33, False),  # a response: never answered
        (INVALID_REQUEST, None, True),
    ]
    assert all(a.message == BATCH for a in answers)
    assert "batches are not supported" in BATCH and one_sentence(BATCH)


# --- refusals: the envelope ------------------------------------------------------------------------

ENVELOPES = [
    # (the line, its code, the id answered with, the message)
    pytest.param(
        '{"jsonrpc":"1.0","id":23,"method":"tools/list"}',
        INVALID_REQUEST,
        23,
        'Invalid Request: "jsonrpc" must be "2.0".',
        id="jsonrpc-1.0",
    ),
    pytest.param(
        '{"id":24,"method":"tools/list"}',
        INVALID_REQUEST,
        24,
        'Invalid Request: "jsonrpc" must be "2.0".',
        id="no-jsonrpc",
    ),
    pytest.param(
        '{"jsonrpc":"2.0","id":25,"method":7}',
        INVALID_REQUEST,
        25,
        'Invalid Request: "method" must be a string.',
        id="numeric-method",
    ),
    pytest.param(
        '{"jsonrpc":"2.0","id":26}',
        INVALID_REQUEST,
        26,
        'Invalid Request: the message has no "method".',
        id="no-method",
    ),
    pytest.param(
        '{"jsonrpc":"2.0","id":27.5,"method":"ping"}',
        INVALID_REQUEST,
        None,
        'Invalid Request: "id" must be a string or an integer.',
        id="fractional-id",
    ),
    pytest.param(
        '{"jsonrpc":"2.0","id":true,"method":"ping"}',
        INVALID_REQUEST,
        None,
        'Invalid Request: "id" must be a string or an integer.',
        id="boolean-id",
    ),
    pytest.param(
        '{"jsonrpc":"2.0","id":null,"method":"ping"}',
        INVALID_REQUEST,
        None,
        'Invalid Request: "id" must be a string or an integer.',
        id="null-id",
    ),
    pytest.param(
        '{"jsonrpc":"2.0","id":[1],"method":"ping"}',
        INVALID_REQUEST,
        None,
        'Invalid Request: "id" must be a string or an integer.',
        id="array-id",
    ),
    pytest.param(
        '{"jsonrpc":"2.0","id":"p22","method":"tools/list","params":[1]}',
        INVALID_PARAMS,
        "p22",
        'Invalid params: MCP methods take "params" as an object of named values, not an array.',
        id="params-array",
    ),
    pytest.param(
        '{"jsonrpc":"2.0","id":21,"method":"tools/list","params":"all"}',
        INVALID_REQUEST,
        21,
        'Invalid Request: "params" must be an object, not a string.',
        id="params-string",
    ),
    pytest.param(
        '{"jsonrpc":"2.0","id":20,"method":"tools/list","params":7}',
        INVALID_REQUEST,
        20,
        'Invalid Request: "params" must be an object, not a number.',
        id="params-number",
    ),
    pytest.param(
        '{"jsonrpc":"2.0","id":5,"method":"x","params":{"q":' + "[" * 300 + "]" * 300 + "}}",
        INVALID_REQUEST,
        5,
        "Invalid Request: the message nests too deeply for the server to read.",
        id="deeper-than-the-sdk-reads",
    ),
]


@pytest.mark.parametrize(("line", "code", "id_", "message"), ENVELOPES)
def test_a_request_with_a_bad_envelope_is_answered_with_its_code_its_id_and_one_sentence(
    line: str, code: int, id_: int | str | None, message: str
) -> None:
    answer = the_refusal(line)
    assert (answer.code, answer.id, answer.answered) == (code, id_, True)
    assert answer.message == message and one_sentence(answer.message)
    assert "pydantic" not in answer.message and "validation error" not in answer.message


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(
            '{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}', id="notification-params-string"
        ),
        pytest.param('{"jsonrpc":"1.0","method":"notifications/initialized"}', id="notification-jsonrpc-1.0"),
        pytest.param('{"jsonrpc":"2.0","id":51,"result":"not an object"}', id="response"),
    ],
)
def test_an_invalid_notification_or_response_is_refused_but_never_answered(line: str) -> None:
    answer = the_refusal(line)
    assert answer.code == INVALID_REQUEST and not answer.answered
    assert one_sentence(answer.message)


def test_a_response_the_server_cannot_read_is_called_one() -> None:
    answer = the_refusal('{"jsonrpc":"2.0","id":51,"result":"not an object"}')
    assert answer.message == "Invalid Request: the message is a response the server cannot read."
    assert answer.id == 51


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        pytest.param('{"jsonrpc":"2.0","id":5,"method":"x","params":{"q":' + "[" * 300 + "]" * 300 + "}}", (5, -32600)),
        pytest.param(
            '{"jsonrpc":"2.0","id":5,"method":"x","params":{"q":' + "[" * 5000 + "]" * 5000 + "}}", (None, -32700)
        ),
        pytest.param('{"jsonrpc":"2.0","id":5,"method":"x","params":{"q":' + "1" * 5000 + "}}", (None, -32700)),
    ],
    ids=["deeper-than-the-sdk-reads", "deeper-than-json-reads", "number-too-long"],
)
def test_frames_only_python_could_parse_are_refused_in_one_sentence(line: str, expected: tuple[object, int]) -> None:
    refused = read(line)
    assert isinstance(refused, list)
    (refusal,) = refused
    assert isinstance(refusal, Refusal) and (refusal.id, refusal.code) == expected, refusal
    assert one_sentence(refusal.message), refusal.message


# --- lone surrogates -------------------------------------------------------------------------------


def test_a_lone_surrogate_in_an_id_never_reaches_the_writer() -> None:
    message = read(r'{"jsonrpc":"2.0","id":"\udc00x","method":"tools/list"}')
    assert not isinstance(message, list) and message.model_dump_json()  # serializable: no lone surrogate left


def test_lone_surrogates_in_arguments_become_replacement_characters_and_are_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    line = r'{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"context_search",'
    line += r'"arguments":{"query":"\ud800 rollback \udc00"}}}'
    with caplog.at_level(logging.WARNING, logger="agents_context.frames"):
        message = read(line)
    assert isinstance(message, JSONRPCRequest) and message.params is not None
    assert message.params["arguments"] == {"query": "\ufffd rollback \ufffd"}
    message.model_dump_json().encode("utf-8")  # what the server writes back is UTF-8
    assert "replaced 2 lone surrogate(s) with U+FFFD in tools/call (id 41)" in caplog.text


def test_a_raw_lone_surrogate_is_replaced_as_an_escaped_one_is() -> None:
    raw = read('{"jsonrpc":"2.0","id":8,"method":"ping","params":{"q":"a\ud800"}}')
    escaped = read('{"jsonrpc":"2.0","id":8,"method":"ping","params":{"q":"a\\ud800"}}')
    assert isinstance(raw, JSONRPCRequest) and isinstance(escaped, JSONRPCRequest)
    assert raw.params == escaped.params == {"q": "a\ufffd"}


def test_a_surrogate_pair_is_a_character_not_a_lone_surrogate() -> None:
    message = read('{"jsonrpc":"2.0","id":9,"method":"ping","params":{"q":"\\ud83d\\ude00"}}')
    assert isinstance(message, JSONRPCRequest) and message.params == {"q": "\U0001f600"}


# --- the answer ------------------------------------------------------------------------------------


def test_a_refusal_is_answered_as_a_json_rpc_error_with_its_id() -> None:
    answer = the_refusal('{"jsonrpc":"2.0","id":"p22","method":"tools/list","params":[1]}').answer()
    assert isinstance(answer.message, JSONRPCError)
    assert json.loads(answer.message.model_dump_json(by_alias=True, exclude_none=True)) == {
        "jsonrpc": "2.0",
        "id": "p22",
        "error": {
            "code": -32602,
            "message": 'Invalid params: MCP methods take "params" as an object of named values, not an array.',
        },
    }


def test_a_refusal_without_a_usable_id_is_answered_with_a_null_id() -> None:
    answer = the_refusal("{not json").answer()
    assert isinstance(answer.message, JSONRPCError)
    written = json.loads(answer.message.model_dump_json(by_alias=True))
    assert written["id"] is None and written["error"]["code"] == -32700


# --- the guard: what goes to the server, what is answered -------------------------------------------


async def lines_of(lines: Sequence[str]) -> AsyncIterator[str]:
    for line in lines:
        yield line


async def guarded(lines: Sequence[str]) -> tuple[list[SessionMessage], list[SessionMessage]]:
    """What `guard` hands the server and what it answers, for these stdin lines."""
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage](100)
    to_client, client_reads = anyio.create_memory_object_stream[SessionMessage](100)
    with server_reads, client_reads:
        await guard(lines_of(lines), to_server, to_client)
        handed = [message async for message in server_reads]  # ends: the guard closed the stream
        answered = [message async for message in client_reads]
    return handed, answered


@pytest.mark.anyio
async def test_the_guard_hands_on_what_the_sdk_reads_and_answers_the_rest(caplog: pytest.LogCaptureFixture) -> None:
    lines = [
        '{"jsonrpc":"2.0","id":1,"method":"ping"}',
        "",
        "   \n",
        "{not json",
        '{"jsonrpc":"1.0","method":"notifications/initialized"}',
        '[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]',
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    ]
    with caplog.at_level(logging.WARNING, logger="agents_context.frames"):
        handed, answered = await guarded(lines)
    assert [type(m.message) for m in handed] == [JSONRPCRequest, JSONRPCNotification]
    errors = [m.message for m in answered]
    assert all(isinstance(e, JSONRPCError) for e in errors)
    assert [(e.id, e.error.code) for e in errors if isinstance(e, JSONRPCError)] == [(None, -32700), (2, -32600)]
    assert "refused a notification or response (JSON-RPC answers neither)" in caplog.text
    assert "refused a batch of 2 messages (1 answered)" in caplog.text
    assert "refused a message (answered with -32700, id None)" in caplog.text


@pytest.mark.anyio
async def test_the_guard_ends_quietly_when_the_server_stops_reading() -> None:
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage](0)
    to_client, client_reads = anyio.create_memory_object_stream[SessionMessage](10)
    server_reads.close()
    with client_reads:
        with anyio.fail_after(10):
            await guard(lines_of(['{"jsonrpc":"2.0","id":1,"method":"ping"}', "{not json"]), to_server, to_client)
        assert [m async for m in client_reads] == []  # it stopped at the first line it could not hand on
