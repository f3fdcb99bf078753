"""What the live server lets in, and what a request costs: a real uvicorn on loopback, real
sockets. Host names (DNS rebinding), ETags and 304, a snapshot serialised once per version
whatever the number of viewers, bounded event streams and connections, idle and slow clients
closed, and a server under a low file-descriptor limit that stays quiet and reachable."""

from __future__ import annotations

import asyncio
import gzip
import http.client
import json
import logging
import os
import resource
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from halvm_prof.live import routes as live_routes
from halvm_prof.live import server
from halvm_prof.live.server import Hosts, Hub, quiet_accept_errors
from halvm_prof.live.state import LiveState
from tests.conftest import CORPUS, THOROUGH
from tests.live.helpers import running
from tests.unit.test_follow import hp_follower, live_follower

REPO = Path(__file__).resolve().parents[2]
#: Seconds that only end a hang: a busy machine is slow, not wrong; the server closing or
#: answering at all is what these tests look for.
HANG = 60.0
CENSUS_HEADER = b'JOB "t"\nDATE "now"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'


# h11, the parser where httptools is not installed, under CI=true
@pytest.fixture(params=["httptools", pytest.param("h11", marks=THOROUGH)])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The guard's rules hold whichever HTTP parser the connection has: httptools where it is
    installed (the server's choice), h11 otherwise."""
    from halvm_prof.live import guard, server

    name = str(request.param)
    if name == "httptools" and not guard.HTTPTOOLS:
        pytest.skip("httptools is not installed")
    chosen = guard.HttpToolsConnection if name == "httptools" else guard.H11Connection
    monkeypatch.setattr(server, "Connection", chosen)
    return name


def _hub(tmp_path: Path, data: bytes = CENSUS_HEADER, max_streams: int = 100) -> tuple[Hub, Path]:
    path = tmp_path / "growing.hp"
    path.write_bytes(data)
    state = LiveState(str(path), "hp", heap=hp_follower(path, quiet_after=60))
    return Hub(state, title="test", poll_interval=0.02, max_streams=max_streams), path


def _census(i: int) -> bytes:
    return f"BEGIN_SAMPLE {i}.0\nmain\t{100 + i}\nEND_SAMPLE {i}.0\n".encode()


def _port(url: str) -> int:
    port = urllib.parse.urlsplit(url).port
    assert port is not None
    return port


def _get(
    url: str, path: str, headers: dict[str, str] | None = None, host: str | None = None
) -> tuple[int, http.client.HTTPMessage, bytes]:
    """GET ``path`` with ``headers``; ``host`` replaces the Host header."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=HANG)
    try:
        conn.putrequest("GET", path, skip_host=host is not None, skip_accept_encoding=True)
        if host is not None:
            conn.putheader("Host", host)
        for k, v in (headers or {}).items():
            conn.putheader(k, v)
        conn.endheaders()
        r = conn.getresponse()
        return r.status, r.headers, r.read()
    finally:
        conn.close()


@contextmanager
def _live_server(
    hp: Path, stderr: Path | None = None, preexec_fn: Callable[[], None] | None = None
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``halvm-prof live --no-open HP`` in a child process and its URL; its standard error
    goes to ``stderr`` (else nowhere); stopped with Ctrl-C afterwards."""
    with ExitStack() as files:
        err = files.enter_context(stderr.open("w")) if stderr else subprocess.DEVNULL
        proc = subprocess.Popen(
            [sys.executable, "-m", "halvm_prof", "live", "--no-open", str(hp)],
            stdout=subprocess.PIPE,
            stderr=err,
            env=dict(os.environ, PYTHONPATH=str(REPO)),
            text=True,
            preexec_fn=preexec_fn,
        )
    try:
        assert proc.stdout is not None
        yield proc, proc.stdout.readline().strip()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)


def _wait(cond: object, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(cond) and cond():
            return
        time.sleep(0.02)
    raise AssertionError("timed out")


@contextmanager
def _stream(url: str) -> Iterator[tuple[http.client.HTTPResponse, dict[str, object]]]:
    """An open event stream and its first message."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        conn.request("GET", "/events")
        r = conn.getresponse()
        assert r.status == 200
        while not (line := r.readline()).startswith(b"data: "):
            pass
        yield r, json.loads(line[6:])
    finally:
        conn.close()


# -- Host names -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "127.0.0.1:{port}", "localhost", "LOCALHOST:{port}", "[::1]", "[::1]:{port}"],
)
def test_its_own_host_names_are_answered(tmp_path: Path, host: str) -> None:
    hub, _ = _hub(tmp_path)
    with running(hub) as url:
        for path in ("/", "/snapshot.json"):
            status, _, _ = _get(url, path, host=host.format(port=_port(url)))
            assert status == 200, (host, path)


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:{port}",
        "localhost.evil.example",
        "127.0.0.1.nip.io:{port}",
        "127.0.0.2:{port}",
        "127.0.0.1:{other}",
        "[::1]x",
        "[::2]:{port}",
        "",
    ],
)
def test_other_host_names_get_421_with_one_line(tmp_path: Path, host: str) -> None:
    # A page on evil.example whose name is rebound to 127.0.0.1 reaches the port but sends its
    # own name: it must not read the profile.
    hub, _ = _hub(tmp_path)
    with running(hub) as url:
        port = _port(url)
        for path in ("/", "/snapshot.json", "/events", "/report"):
            status, _, body = _get(url, path, host=host.format(port=port, other=port + 1))
            assert status == 421, (host, path, status)
            assert body.count(b"\n") == 1 and b"host names" in body


def test_a_request_without_host_gets_400(tmp_path: Path, parser: str) -> None:
    hub, _ = _hub(tmp_path)
    with running(hub) as url, socket.create_connection(("127.0.0.1", _port(url)), 5) as s:
        s.sendall(b"GET /snapshot.json HTTP/1.0\r\n\r\n")
        answer = b""
        while chunk := s.recv(4096):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and body == b"a request needs one Host header\n"


def test_a_websocket_upgrade_gets_the_plain_answer(tmp_path: Path, parser: str) -> None:
    """The views stream over plain HTTP: a WebSocket handshake is answered as the request it
    also is (no protocol of its own is loaded or served; it was refused with a 403)."""
    hub, _ = _hub(tmp_path)
    with running(hub) as url, socket.create_connection(("127.0.0.1", _port(url)), 5) as s:
        s.sendall(
            b"GET /snapshot.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
            b"Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
        answer = s.recv(65536)
    head = answer.partition(b"\r\n\r\n")[0]
    assert head.startswith(b"HTTP/1.1 200"), head
    assert b"application/json" in head.lower()


def test_an_ipv6_loopback_server_answers_its_names(tmp_path: Path) -> None:
    try:
        socket.socket(socket.AF_INET6).close()
        socket.getaddrinfo("::1", 0, socket.AF_INET6)
    except OSError as e:
        pytest.skip(f"no IPv6 loopback here: {e}")
    hub, _ = _hub(tmp_path)
    with running(hub, host="::1") as url:
        assert url.startswith("http://[::1]:")
        assert _get(url, "/snapshot.json")[0] == 200
        assert _get(url, "/snapshot.json", host=f"[::1]:{_port(url)}")[0] == 200
        assert _get(url, "/snapshot.json", host="evil.example")[0] == 421


def test_the_host_it_was_given_is_answered(tmp_path: Path) -> None:
    hub, _ = _hub(tmp_path)
    with running(hub, host="127.0.0.2") as url:
        assert url.startswith("http://127.0.0.2:")
        assert _get(url, "/snapshot.json", host=f"127.0.0.2:{_port(url)}")[0] == 200
        assert _get(url, "/snapshot.json", host="127.0.0.2")[0] == 200
        assert _get(url, "/snapshot.json", host="evil.example")[0] == 421


def test_a_wildcard_address_answers_addresses_but_not_names() -> None:
    # Not bound (servers here listen on loopback only): the rule itself.
    hosts = Hosts(frozenset({"127.0.0.1", "localhost", "[::1]", "0.0.0.0"}), 8080, True)
    assert hosts.accepts("192.168.1.4:8080") and hosts.accepts("[fe80::1]:8080")
    assert not hosts.accepts("my.lan:8080") and not hosts.accepts("192.168.1.4:8081")
    assert not Hosts(hosts.names, 8080).accepts("192.168.1.4:8080")


# -- what a request costs ---------------------------------------------------------------------


def test_page_is_rendered_once_and_answers_if_none_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renders = []
    from halvm_prof.live.page import render_live_page as real

    def counted(
        title: str, token: str | None, fleet: str | None = None, retitle: str | None = None
    ) -> str:
        renders.append(title)
        return real(title, token, fleet, retitle)

    monkeypatch.setattr(live_routes, "render_live_page", counted)
    hub, _ = _hub(tmp_path)
    with running(hub) as url:
        pages = [_get(url, "/") for _ in range(5)]
        status, headers, body = pages[0]
        assert status == 200 and b"echarts" in body and len(renders) == 1
        etag = headers["ETag"]
        assert etag and all(p[1]["ETag"] == etag for p in pages)
        status, headers, body = _get(url, "/", {"If-None-Match": etag})
        assert status == 304 and body == b"" and headers["ETag"] == etag
        # Compressed once too, and the same page.
        status, headers, packed = _get(url, "/", {"Accept-Encoding": "gzip"})
        assert status == 200 and headers["Content-Encoding"] == "gzip"
        assert gzip.decompress(packed) == body or gzip.decompress(packed) == pages[0][2]
        assert headers["ETag"] != etag
        assert _get(url, "/", {"Accept-Encoding": "gzip", "If-None-Match": headers["ETag"]})[0] == (
            304
        )
        assert len(renders) == 1


def test_a_snapshot_is_serialised_once_for_all_viewers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    dumps = json.dumps

    def counted(value: object, *args: Any, **kwargs: Any) -> str:
        if isinstance(value, dict) and "heap" in value:
            calls.append(value.get("version"))
        return dumps(value, *args, **kwargs)

    monkeypatch.setattr(json, "dumps", counted)
    hub, path = _hub(tmp_path, CENSUS_HEADER + _census(0))
    with running(hub) as url, ExitStack() as viewers:
        _wait(lambda: json.loads(_get(url, "/snapshot.json")[2])["samples"] == 1)
        for _ in range(3):
            viewers.enter_context(_stream(url))
        _wait(lambda: hub.viewers == 3)
        before = len(calls)
        version = hub.encoded.version
        answers = [_get(url, "/snapshot.json") for _ in range(30)]
        assert hub.encoded.version == version
        # Thirty requests and three streams at one version: nothing serialised again.
        assert len(calls) == before
        texts = {json.loads(a[2])["version"] for a in answers}
        assert texts == {version}
        with path.open("ab") as f:
            f.write(_census(1))
        _wait(lambda: json.loads(_get(url, "/snapshot.json")[2])["samples"] == 2)
        for _ in range(30):
            _get(url, "/snapshot.json")
        # Once per version published since, whatever the requests and viewers.
        assert len(calls) - before == hub.encoded.version - version
        assert len(calls) - before <= 3


def test_snapshot_etag_answers_304_until_the_version_changes(tmp_path: Path) -> None:
    hub, path = _hub(tmp_path, CENSUS_HEADER + _census(0))
    with running(hub) as url:
        _wait(lambda: json.loads(_get(url, "/snapshot.json")[2])["samples"] == 1)
        status, headers, body = _get(url, "/snapshot.json")
        etag = headers["ETag"]
        snap = json.loads(body)
        # The spliced text is the one json.dumps gives.
        assert body.decode() == json.dumps(snap, sort_keys=True)
        assert headers["Cache-Control"] == "no-cache"
        status, again, empty = _get(url, "/snapshot.json", {"If-None-Match": etag})
        assert status == 304 and empty == b"" and again["ETag"] == etag
        # The age goes on growing while the version stands.
        time.sleep(0.3)
        later = json.loads(_get(url, "/snapshot.json")[2])
        assert later["version"] == snap["version"]
        assert later["age"] >= snap["age"] + 0.25
        with path.open("ab") as f:
            f.write(_census(1))
        _wait(lambda: _get(url, "/snapshot.json", {"If-None-Match": etag})[0] == 200)
        status, headers, body = _get(url, "/snapshot.json", {"If-None-Match": etag})
        assert headers["ETag"] != etag and json.loads(body)["samples"] == 2


# -- bounds -----------------------------------------------------------------------------------


def test_event_streams_are_bounded_with_a_clear_503(tmp_path: Path) -> None:
    hub, _ = _hub(tmp_path, max_streams=2)
    with running(hub) as url:
        with _stream(url), _stream(url) as (second, _):
            _wait(lambda: hub.viewers == 2)
            status, headers, body = _get(url, "/events")
            assert status == 503 and headers["Retry-After"]
            assert body.count(b"\n") == 1 and b"at most 2" in body
            # The rest of the server answers.
            assert _get(url, "/snapshot.json")[0] == 200
            second.close()
        _wait(lambda: hub.viewers == 0)
        with _stream(url):
            pass


def _closed_within(s: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``s`` within ``seconds`` (what it sends is read and dropped)."""
    s.settimeout(0.1)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if not s.recv(65536):
                return True
        except TimeoutError:
            continue
        except ConnectionResetError:
            return True
    return False


def test_an_idle_connection_is_closed(tmp_path: Path, parser: str) -> None:
    hub, _ = _hub(tmp_path)
    with (
        running(hub, request_timeout=0.5) as url,
        socket.create_connection(("127.0.0.1", _port(url)), 5) as idle,
    ):
        assert _closed_within(idle, HANG)


def test_a_request_sent_too_slowly_is_closed(tmp_path: Path, parser: str) -> None:
    # Slowloris: a header line now and then keeps a connection that never finishes a request.
    hub, _ = _hub(tmp_path)
    with running(hub, request_timeout=0.5) as url:
        with socket.create_connection(("127.0.0.1", _port(url)), 5) as slow:
            slow.sendall(b"GET /snapshot.json HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            start = time.monotonic()
            closed = False
            while time.monotonic() - start < HANG and not closed:
                try:
                    slow.sendall(b"X-Slow: 1\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    closed = True
                    break
                closed = _closed_within(slow, 0.1)
            assert closed
        # A keep-alive connection between requests is held to the same time.
        with socket.create_connection(("127.0.0.1", _port(url)), 5) as kept:
            kept.sendall(b"GET /snapshot.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            kept.recv(65536)
            kept.sendall(b"GET /snapshot.json HTTP/1.1\r\n")
            start = time.monotonic()
            closed = False
            while time.monotonic() - start < HANG and not closed:
                try:
                    kept.sendall(b"X-Slow: 1\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    closed = True
                    break
                closed = _closed_within(kept, 0.1)
            assert closed


def test_idle_connections_make_room_and_busy_ones_get_503(tmp_path: Path, parser: str) -> None:
    hub, _ = _hub(tmp_path)
    with running(hub, max_connections=8) as url:
        port = _port(url)
        idle = [socket.create_connection(("127.0.0.1", port), 5) for _ in range(20)]
        try:
            # Sockets that send nothing do not lock the page out: the longest waiting go.
            for _ in range(3):
                assert _get(url, "/snapshot.json")[0] == 200
            assert sum(_closed_within(s, 0.05) for s in idle) >= 12
        finally:
            for s in idle:
                s.close()
        # Eight streams take every connection; the ninth is told why, in one line.
        hub.max_streams = 8
        with ExitStack() as streams:
            for _ in range(8):
                streams.enter_context(_stream(url))
            _wait(lambda: hub.viewers == 8)
            status, headers, body = _get(url, "/snapshot.json")
            assert status == 503 and headers["Connection"] == "close"
            assert body.count(b"\n") == 1 and b"too many connections" in body
        _wait(lambda: hub.viewers == 0)
        assert _get(url, "/snapshot.json")[0] == 200


def test_a_page_that_stops_reading_its_stream_is_closed(tmp_path: Path, parser: str) -> None:
    # Full-size snapshots (720 points of 40 bands) pushed to a client that reads nothing:
    # once the kernel's buffers and the transport's are full, the stream is given
    # write_timeout, then closed, and holds no slot.
    bands = [f"(1{k})Module{k}.function{k}/caller/main" for k in range(40)]

    def census(i: int) -> bytes:
        rows = "".join(f"{b}\t{(i * 7 + k * 13) % 100000}\n" for k, b in enumerate(bands))
        return f"BEGIN_SAMPLE {i}.0\n{rows}END_SAMPLE {i}.0\n".encode()

    hub, path = _hub(tmp_path, CENSUS_HEADER + b"".join(census(i) for i in range(1500)))
    with running(hub, write_timeout=0.5) as url:
        _wait(lambda: json.loads(_get(url, "/snapshot.json")[2])["samples"] == 1500)
        stuck = socket.socket()
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            stuck.connect(("127.0.0.1", _port(url)))
            stuck.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            _wait(lambda: hub.viewers == 1)
            with path.open("ab") as f:
                i = 1500
                deadline = time.monotonic() + 20
                while hub.viewers and time.monotonic() < deadline:
                    f.write(census(i))
                    f.flush()
                    i += 1
                    time.sleep(0.02)
            assert hub.viewers == 0, "the stream that is not read is still open"
            # Other clients are served as before.
            assert _get(url, "/snapshot.json")[0] == 200
        finally:
            stuck.close()


def test_accept_errors_are_one_line_now_and_then() -> None:
    # uvicorn's logging config (set by any earlier in-process server) stops "uvicorn" from
    # propagating to the root logger, where caplog listens: listen on the logger itself.
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    server_log = logging.getLogger("uvicorn.error")
    collect = Collect(logging.WARNING)
    server_log.addHandler(collect)
    level = server_log.level
    server_log.setLevel(logging.WARNING)
    loop = asyncio.new_event_loop()
    try:
        quiet_accept_errors(loop)
        for _ in range(1000):
            loop.call_exception_handler(
                {
                    "message": "socket.accept() out of system resource",
                    "exception": OSError(24, "Too many open files"),
                }
            )
    finally:
        loop.close()
        server_log.removeHandler(collect)
        server_log.setLevel(level)
    assert lines == [
        "halvm-prof: cannot accept connections (Too many open files); they wait until some close"
    ]


def test_a_low_descriptor_limit_keeps_the_server_quiet_and_reachable(tmp_path: Path) -> None:
    """``ulimit -n 256`` and 300 idle sockets: the server used to stop answering and log a
    traceback per accept try (22,416 in 10 s)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 400:
        want = min(hard, 1024) if hard != resource.RLIM_INFINITY else 1024
        if want < 400:
            pytest.skip(f"this process may open only {hard} files")
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    hp = tmp_path / "quiet.hp"
    hp.write_bytes(CENSUS_HEADER + _census(0))
    err = tmp_path / "stderr.txt"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    with _live_server(hp, err, limit) as (_, url):
        port = _port(url)
        idle = [socket.create_connection(("127.0.0.1", port), 5) for _ in range(300)]
        try:
            # Answered at all: the server used to leave it in the queue for good.
            status, _, body = _get(url, "/snapshot.json")
            assert status == 200 and json.loads(body)["samples"] == 1
        finally:
            for s in idle:
                s.close()
        time.sleep(0.5)
        for _ in range(3):
            assert _get(url, "/snapshot.json")[0] == 200
    lines = err.read_text().splitlines()
    assert len(lines) <= 3, lines[:10]
    assert not any("Traceback" in line for line in lines)


def test_malformed_requests_are_answered_without_a_line_each(tmp_path: Path, parser: str) -> None:
    # uvicorn logs a warning per malformed request: a client could fill the terminal.
    hp = tmp_path / "quiet.hp"
    hp.write_bytes(CENSUS_HEADER)
    stderr = tmp_path / "stderr.txt"
    with _live_server(hp, stderr) as (_, url):
        for request in [b"GARBAGE \x00\r\n\r\n", b"GET / HTTP/1.1\r\n\r\n"] * 50:
            with socket.create_connection(("127.0.0.1", _port(url)), 5) as s:
                s.sendall(request)
                assert s.recv(4096).startswith(b"HTTP/1.1 400")
        assert _get(url, "/snapshot.json")[0] == 200
    err = stderr.read_text()
    assert len(err.splitlines()) <= 2, err[:2000]


def test_snapshot_json_is_the_same_figure_as_the_stream(tmp_path: Path) -> None:
    """Two views of one snapshot: what /snapshot.json says and what a stream pushes."""
    hub, _ = _hub(tmp_path, (CORPUS / "leaky-hc.hp").read_bytes())
    with running(hub) as url:
        _wait(lambda: json.loads(_get(url, "/snapshot.json")[2])["closed"])
        polled = json.loads(_get(url, "/snapshot.json")[2])
        with _stream(url) as (_, pushed):
            pass
    polled.pop("age")
    pushed.pop("age")
    assert pushed == polled


@pytest.mark.parametrize("source", ["leaky-hc.hp", "leaky-hT.eventlog"])
def test_encoded_snapshot_is_the_text_of_to_dict(source: str) -> None:
    """What is served (serialised without asdict's copy, the age spliced in front) is the
    text ``json.dumps(snapshot.to_json(), sort_keys=True)`` gives, on real GHC output with
    heap bands, GC figures, capabilities and an exit view."""
    from dataclasses import replace

    from halvm_prof.live.state import ExitView

    path = CORPUS / source
    if source.endswith(".hp"):
        state = LiveState(str(path), "hp", heap=hp_follower(path, quiet_after=60))
    else:
        state = LiveState(str(path), "eventlog", eventlog=live_follower(path))
    for _ in range(5):
        state.poll()
    snap = state.snapshot()
    assert snap.samples > 0 and (source.endswith(".hp") or (snap.gc and snap.caps))
    snap = replace(snap, exit=ExitView(1, None, True, ["crashed", "é \u2028"], "r.html"))
    for f in state.followers:
        f.close()
    want = json.dumps(snap.to_json(), sort_keys=True, allow_nan=False)
    assert server.snapshot_json(snap) == want
    encoded = server.Encoded.of(snap, "x")
    assert encoded.body(encoded.made).decode() == want
    assert encoded.event == b"event: snapshot\ndata: " + want.encode() + b"\n\n"
    later = json.loads(encoded.body(encoded.made + 2.5))
    assert snap.age is not None and later["age"] == pytest.approx(snap.age + 2.5)
    assert {**later, "age": snap.age} == json.loads(want)


def _rss_kib(pid: int, field: str) -> int:
    """``VmRSS`` or ``VmHWM`` (peak) of process ``pid``, in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


#: Sockets that ask for the page and never read, per round (the probe used 500).
UNREAD = 400


def test_clients_that_never_read_hold_bounded_memory(tmp_path: Path, parser: str) -> None:
    """400 sockets send ``GET /`` (a 1 MB page) and never read, three rounds: each connection
    holds at most a bounded part of its answer, and so do all of them together. The probe saw
    the server grow from 219 MB to 624 MB in one round of 500 and 1,267 MB after five."""
    hp = tmp_path / "page.hp"
    hp.write_bytes(CENSUS_HEADER + _census(0))
    with _live_server(hp) as (proc, url):
        port = _port(url)
        assert _get(url, "/")[0] == 200
        before = _rss_kib(proc.pid, "VmRSS")
        for _ in range(3):
            unread = []
            try:
                for _ in range(UNREAD):
                    s = socket.socket()
                    # A client that reads nothing: its own buffer is as small as Linux allows.
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                    s.settimeout(HANG)
                    s.connect(("127.0.0.1", port))
                    s.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
                    unread.append(s)
                # One request answered after all of them: the server has begun each answer.
                assert _get(url, "/snapshot.json")[0] == 200
                time.sleep(0.5)
                grown = _rss_kib(proc.pid, "VmHWM") - before
            finally:
                for s in unread:
                    s.close()
            # 400 connections with 1 MB each to send: about 300 MB held before.
            assert grown < 64 * 1024, f"the server grew {grown // 1024} MiB"
        assert _get(url, "/")[0] == 200


def test_the_snapshot_answered_first_hand_is_the_app_s_answer(tmp_path: Path) -> None:
    # GET /snapshot.json skips Starlette (routes.Polled); an If-None-Match that matches nothing
    # takes the app's way: the same headers and the same text but for the age.
    hub, _path = _hub(tmp_path, CENSUS_HEADER + _census(0) + _census(1))
    with running(hub) as url:
        _wait(lambda: json.loads(_get(url, "/snapshot.json")[2])["samples"] == 2)
        fast = _get(url, "/snapshot.json")
        slow = _get(url, "/snapshot.json", {"If-None-Match": '"none"'})
        assert fast[0] == slow[0] == 200
        # The same headers; the length each its own body's (the age may take a digit more).
        for status, headers, body in (fast, slow):
            assert int(headers["content-length"]) == len(body), status
        same = [
            sorted((k, v) for k, v in r[1].items() if k.lower() != "content-length")
            for r in (fast, slow)
        ]
        assert same[0] == same[1]
        first, second = json.loads(fast[2]), json.loads(slow[2])
        first.pop("age"), second.pop("age")
        assert first == second
        # Still only its own names: another Host, or none, gets the app's refusal.
        assert _get(url, "/snapshot.json", host="evil.example")[0] == 421
