"""What the replica's child processes share (the ingest child, gpuradar/ingest_process.py; the alert sender's,
gpuradar/sender_process.py): one length-prefixed pickled frame per message over a socket pair, the parent's
logging carried over, a child that dies with its parent, runs niced below it, and is reaped (or killed) when done.

    proc, reader, writer = await spawn("gpuradar.ingest_process", config)   # the child runs that module's main()
    ...                                                                     # frames with send / receive
    await reap(proc, writer)

    def main() -> None:                                                     # in the child's module
        fd = enter_child(sys.argv[1:])
        if fd is not None:
            asyncio.run(serve(fd))

The child dies with its parent: it reads end-of-file on the socket when the parent goes, and on Linux the kernel
also sends it a signal when the parent dies (PR_SET_PDEATHSIG), so a SIGKILLed replica leaves no child behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import signal
import socket
import struct
import sys
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol

log = logging.getLogger(__name__)

HEADER = struct.Struct("!I")  # frame length
STOP_TIMEOUT = 10.0  # seconds a child gets to finish and exit once its channel is closed, before it is killed
CHILD_NICENESS = 10  # added to the parent's: a child yields the CPU to the bot's loop


async def send(writer: asyncio.StreamWriter, message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    writer.write(HEADER.pack(len(data)))
    writer.write(data)  # not joined to the header: a whole poll is megabytes, copied once more for nothing
    await writer.drain()


def send_nowait(writer: asyncio.StreamWriter, message: object) -> None:
    """A small frame written without waiting for the buffer to drain (from synchronous code on the loop)."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    writer.write(HEADER.pack(len(data)) + data)


async def receive(reader: asyncio.StreamReader) -> Any:
    (size,) = HEADER.unpack(await reader.readexactly(HEADER.size))
    return pickle.loads(await reader.readexactly(size))


@dataclass(frozen=True, slots=True)
class LogConfig:
    """The parent's logging, so a child's lines look the same and redact the same secrets."""

    level: int = logging.INFO
    json_lines: bool | None = None  # None: no logging set up by the parent (leave Python's defaults)
    secrets: list[str] = field(default_factory=list)

    @classmethod
    def of_parent(cls) -> LogConfig:
        from gpuradar.logs import JsonFormatter, _GpuradarHandler

        root = logging.getLogger()
        for handler in root.handlers:
            if isinstance(handler, _GpuradarHandler):
                formatter = handler.formatter
                redactor = getattr(formatter, "redactor", None)
                return cls(root.level, isinstance(formatter, JsonFormatter), list(getattr(redactor, "secrets", [])))
        return cls(root.level)

    def apply(self) -> None:
        if self.json_lines is not None:
            from gpuradar.logs import configure_logging

            redactor = configure_logging(self.level, json_lines=self.json_lines)
            redactor.secrets = self.secrets
        else:
            logging.basicConfig(level=self.level)


async def spawn(module: str, config: object) -> tuple[asyncio.subprocess.Process, asyncio.StreamReader,
                                                      asyncio.StreamWriter]:
    """Start `module`'s `main()` in a child process (stdout and stderr stay the parent's, for its logs) and send it
    `config` as its first frame."""
    parent_end, child_end = socket.socketpair()
    try:
        proc = await asyncio.create_subprocess_exec(
            # Imported, not run as __main__: the pickled messages name their classes by the module's name.
            sys.executable, "-c", f"from {module} import main; main()", str(child_end.fileno()), str(os.getpid()),
            pass_fds=(child_end.fileno(),), stdin=asyncio.subprocess.DEVNULL)
    finally:
        child_end.close()
    try:
        reader, writer = await asyncio.open_connection(sock=parent_end)
        await send(writer, config)
    except BaseException:  # cancelled or failed half-way: no half-started child is left behind
        parent_end.close()
        await reap(proc, None)
        raise
    return proc, reader, writer


class ChildHandle(Protocol):
    """What the parent uses of a running child: `asyncio.subprocess.Process`, or a `ThreadChild`."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | None: ...
    async def wait(self) -> int: ...
    def kill(self) -> None: ...


class ThreadChild:
    """A child's channel served by a thread of this process with its own event loop: the same frames and the same
    child code as a process, without the interpreter start (about 0.7 s of CPU per child). For tests and
    single-process embedding only: no niceness, the GIL is shared, and a thread cannot be killed: `kill` does
    nothing, and `reap`'s wait after it returns once the thread has seen its channel close."""

    def __init__(self, main: Callable[[int], Coroutine[Any, Any, None]], fd: int, name: str) -> None:
        self.pid = os.getpid()
        self.returncode: int | None = None
        loop = asyncio.get_running_loop()
        self._done: asyncio.Future[int] = loop.create_future()

        def finished(code: int) -> None:
            self.returncode = code
            if not self._done.done():
                self._done.set_result(code)

        def run() -> None:
            code = 1
            try:
                asyncio.run(main(fd))
                code = 0
            except BaseException:
                log.exception("%s thread failed", name)
            finally:
                with contextlib.suppress(RuntimeError):  # the parent's loop is already closed: nobody waits
                    loop.call_soon_threadsafe(finished, code)

        self._thread = threading.Thread(target=run, name=name, daemon=True)
        self._thread.start()

    async def wait(self) -> int:
        code = await asyncio.shield(self._done)
        self._thread.join()  # its last step was to say so: what is left of it returns at once
        return code

    def kill(self) -> None:
        pass  # see the class


async def spawn_in_thread(main: Callable[[int], Coroutine[Any, Any, None]], config: object, name: str
                          ) -> tuple[ThreadChild, asyncio.StreamReader, asyncio.StreamWriter]:
    """`spawn`'s twin for a `ThreadChild`: `main(fd)` is what the child module's `main()` runs once it entered."""
    parent_end, child_end = socket.socketpair()
    child = ThreadChild(main, child_end.detach(), name)
    reader, writer = await asyncio.open_connection(sock=parent_end)
    await send(writer, config)
    return child, reader, writer


async def reap(proc: ChildHandle | None, writer: asyncio.StreamWriter | None,
               timeout: float = STOP_TIMEOUT) -> None:
    """Close the channel (the child exits on end-of-file) and wait for the child; killed after `timeout`."""
    if writer is not None:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
    if proc is not None:
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()


def die_with_parent(death_signal: int = signal.SIGTERM) -> None:
    """Linux: the kernel sends `death_signal` to this process when its parent dies (nothing else to rely on if the
    parent is SIGKILLed while this child is busy: the end-of-file is only seen between calls)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, death_signal)  # PR_SET_PDEATHSIG


def enter_child(args: list[str], niceness: int = CHILD_NICENESS,
                death_signal: int = signal.SIGTERM) -> int | None:
    """A child's first steps: die with the parent (by `death_signal`), leave Ctrl-C to it, run niced. Returns the
    socket's file descriptor, or None when the parent is already gone."""
    die_with_parent(death_signal)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent stops us in order
    if os.getppid() != int(args[1]):  # the parent died before we could ask to die with it
        return None
    # Background work: where the machine's cores are busy, the bot's loop (answers users wait for) runs first.
    os.nice(niceness)
    return int(args[0])
