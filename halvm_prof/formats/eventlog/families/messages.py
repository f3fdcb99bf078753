"""Messages and markers: the RTS's and the program's text, binary messages, version and
invocation, interned strings."""

from __future__ import annotations

from halvm_prof.formats.eventlog.event_types import (
    INTERN_STRING,
    LOG_MSG,
    PROGRAM_INVOCATION,
    USER_BINARY_MSG,
    USER_MARKER,
    USER_MSG,
    VERSION,
    Layout,
    Spec,
)
from halvm_prof.formats.eventlog.payloads import (
    VAR_TEXT,
    spec,
    user_binary,
    var_intern_string,
    var_string,
)
from halvm_prof.formats.eventlog.show_text import (
    printable_text,
)

SPECS: tuple[Spec, ...] = (
    spec(LOG_MSG, "Message", "text", [VAR_TEXT], lambda a: str(a[0])),
    spec(USER_MSG, "UserMessage", "text", [VAR_TEXT], lambda a: str(a[0])),
    spec(
        VERSION,
        "Version",
        "version",
        [Layout(None, var_string)],
        lambda a: f"compiler version is {a[0]}",
    ),
    spec(
        PROGRAM_INVOCATION,
        "ProgramInvocation",
        "commandline",
        [Layout(None, var_string)],
        lambda a: f"program invocation: {a[0]}",
    ),
    spec(
        INTERN_STRING,
        "InternString",
        "text id",
        [Layout(None, var_intern_string)],
        lambda a: f'Interned string: "{a[0]}" with id {a[1]}',
    ),
    spec(USER_MARKER, "UserMarker", "text", [VAR_TEXT], lambda a: f"marker: {a[0]}"),
    spec(
        USER_BINARY_MSG,
        "UserBinaryMessage",
        "payload",
        [Layout(None, user_binary)],
        lambda a: f"binary message {printable_text(a[0])}",
    ),
)
