"""The lifecycle shared by nliforge's local test servers: an aiohttp app on its own event loop in a
daemon thread, started and stopped from synchronous code (or used as a context manager)."""

from __future__ import annotations

import asyncio
import threading


class ThreadedServer:
    """Subclasses implement `start_async` (listen, set `self.port`) and `stop_async` (clean up)."""

    thread_name = "local-server"

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    async def start_async(self) -> None:
        raise NotImplementedError

    async def stop_async(self) -> None:
        raise NotImplementedError

    def start(self):
        self._loop = asyncio.new_event_loop()
        self._loop.run_until_complete(self.start_async())
        self._thread = threading.Thread(target=self._loop.run_forever, name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.run_until_complete(self.stop_async())
        self._loop.close()
        self._loop = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
