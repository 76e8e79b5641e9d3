#!/usr/bin/env python3
"""`teleprompt serve` beside slow clients (issue 29): N connections that
trickle their request headers one byte a second (reconnecting when the
server closes them), while a few keep-alive clients render a small prompt
as fast as they can. Prints the normal clients' renders per second and
median/p99 latency without and with the slow connections, how many slow
connections the server closed, then the time from SIGTERM (with every slow
connection still half-sent) to the process's exit. Not run in CI.

    cargo build --release -p teleprompt-cli
    python3 bench/serve/slow_clients.py [--slow 2000] [--seconds 10]
"""
import argparse, asyncio, json, os, signal, statistics, subprocess, tempfile, time

BODY = json.dumps({"data": {"name": "you"}}).encode()


async def normal_client(port, until, latencies):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    request = (
        b"POST /v1/prompts/hello/render HTTP/1.1\r\nHost: b\r\nContent-Length: %d\r\n\r\n" % len(BODY)
        + BODY
    )
    while time.monotonic() < until:
        started = time.perf_counter()
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
        )
        await reader.readexactly(length)
        assert head.startswith(b"HTTP/1.1 200"), head
        latencies.append(time.perf_counter() - started)
    writer.close()


async def slow_client(port, stop, closed):
    text = b"POST /v1/prompts/hello/render HTTP/1.1\r\nHost: slow\r\nX-Pad: " + b"a" * 10_000
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            for byte in text:
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(1)
                if stop.is_set():
                    return
        except (ConnectionError, OSError):
            closed[0] += 1
            await asyncio.sleep(0.2)


async def phase(port, clients, seconds):
    latencies = []
    until = time.monotonic() + seconds
    await asyncio.gather(*(normal_client(port, until, latencies) for _ in range(clients)))
    latencies.sort()
    return len(latencies) / seconds, statistics.median(latencies), latencies[int(len(latencies) * 0.99)]


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--slow", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--bin", default="target/release/teleprompt")
    parser.add_argument("--port", type=int, default=18182)
    args = parser.parse_args()
    work = tempfile.mkdtemp()
    os.mkdir(f"{work}/prompts")
    with open(f"{work}/prompts/hello.j2", "w") as file:
        file.write("Hello {{ name }}.")
    server = subprocess.Popen(
        [args.bin, "serve", f"{work}/prompts", "--listen", f"127.0.0.1:{args.port}", "--no-watch",
         "--max-connections", str(args.slow + 500), "--header-timeout", "10000",
         "--shutdown-timeout", "2000"],
        stderr=open(f"{work}/server.log", "w"),
    )
    for _ in range(100):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", args.port)
            writer.close()
            break
        except OSError:
            await asyncio.sleep(0.1)
    rate, p50, p99 = await phase(args.port, args.clients, args.seconds)
    print(f"quiet:      {rate:8.0f} renders/s  p50 {p50 * 1e3:.2f} ms  p99 {p99 * 1e3:.2f} ms")
    stop, closed = asyncio.Event(), [0]
    slow = [asyncio.create_task(slow_client(args.port, stop, closed)) for _ in range(args.slow)]
    await asyncio.sleep(2)
    rate, p50, p99 = await phase(args.port, args.clients, args.seconds)
    print(f"{args.slow} slow: {rate:8.0f} renders/s  p50 {p50 * 1e3:.2f} ms  p99 {p99 * 1e3:.2f} ms"
          f"  (slow connections closed by the server so far: {closed[0]})")
    started = time.perf_counter()
    server.send_signal(signal.SIGTERM)
    while server.poll() is None:
        await asyncio.sleep(0.01)
    print(f"shutdown with {args.slow} half-sent requests open: {time.perf_counter() - started:.2f} s (exit {server.returncode})")
    stop.set()
    for task in slow:
        task.cancel()
    await asyncio.gather(*slow, return_exceptions=True)


asyncio.run(main())
