"""A TCP relay for the tests: listen on ADDRESS:PORT, pass every connection to 127.0.0.1:TARGET_PORT.

gohello binds 127.0.0.1 only; tests/helpers.py's Bench (the clients tests) runs it in the lab's
controller namespace and this relay beside it so that wrk on the test hosts can reach it, until the
servers listen on the target's address themselves (--server-host). Prints `ready` once
listening; stops on SIGTERM.

Usage: python3 tests/tcp_relay.py ADDRESS PORT TARGET_PORT
"""

from __future__ import annotations

import asyncio
import signal
import sys


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy reader to writer until either side closes."""
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def main(address: str, port: int, target: int) -> None:
    async def relay(reader, writer):
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    server = await asyncio.start_server(relay, address, port, backlog=1024)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print("ready", flush=True)
    async with server:
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
