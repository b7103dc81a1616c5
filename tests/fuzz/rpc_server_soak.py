#!/usr/bin/env python3
"""Authenticated frame flood against a live `optune rpc server` on loopback, for its memory.

Opens sessions one after another (each through the token-less loopback handshake), sends each a few
mutated frames (well-formed measure and describe messages with hostile metadata, bad requests,
oversized and truncated frames, random bytes) and samples the server's resident memory every
--every frames. Whether memory that grows is a leak is for a leak checker to say (valgrind,
LeakSanitizer); this shows whether it keeps growing. Used for docs/reliability.md's figures:

    build/bin/optune rpc server --port 0 --workdir /tmp/w &   # note its port and pid
    python3 tests/fuzz/rpc_server_soak.py --port PORT --pid PID --frames 100000
"""
import argparse
import json
import os
import random
import socket
import struct
import time

MAGIC, VERSION = b"OPTR", 2
CHALLENGE, AUTHENTICATE, WELCOME, ERROR, MEASURE, RESULT, DESCRIBE, DESCRIPTION = 1, 2, 3, 4, 5, 6, 17, 18


def frame(kind, metadata, payload=b"", version=VERSION, announced=None):
    text = metadata if isinstance(metadata, bytes) else json.dumps(metadata).encode()
    size = len(payload) if announced is None else announced
    return MAGIC + struct.pack(">HHII", version, kind, len(text), size) + text + payload


def receive(sock):
    head = b""
    while len(head) < 16:
        chunk = sock.recv(16 - len(head))
        if not chunk:
            raise ConnectionError("closed")
        head += chunk
    _, _, kind, meta_size, payload_size = struct.unpack(">4sHHII", head)
    rest = b""
    while len(rest) < meta_size + payload_size:
        chunk = sock.recv(meta_size + payload_size - len(rest))
        if not chunk:
            raise ConnectionError("closed")
        rest += chunk
    return kind, json.loads(rest[:meta_size] or b"{}")


def session(port):
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    kind, _ = receive(sock)
    assert kind == CHALLENGE, kind
    sock.sendall(frame(AUTHENTICATE, {"role": "client", "nonce": os.urandom(32).hex(), "mac": ""}))
    kind, _ = receive(sock)
    assert kind == WELCOME, kind
    return sock


def random_json(rng, depth=0):
    choice = rng.randrange(8 if depth < 3 else 5)
    if choice == 0:
        return rng.randint(-2**63, 2**64)
    if choice == 1:
        return rng.random() * 10 ** rng.randint(-300, 300)
    if choice == 2:
        return "".join(rng.choice("gemm.f32.MNK0123456789conv2d=,:/\\x") for _ in range(rng.randrange(40)))
    if choice == 3:
        return None
    if choice == 4:
        return rng.random() < 0.5
    if choice in (5, 6):
        return {rng.choice(["workload", "timing", "seed", "backend", "target", "describe", "cache_dir",
                            "repeat", "number", "timeout_seconds", "k"]): random_json(rng, depth + 1)
                for _ in range(rng.randrange(5))}
    return [random_json(rng, depth + 1) for _ in range(rng.randrange(5))]


def hostile_frames(rng):
    good = {"workload": "gemm.f32.M8.N8.K8", "timing": {"repeat": 1}}
    kind = rng.randrange(9)
    if kind == 0:  # a well-formed measure of bytes that are no shared object
        return [frame(MEASURE, {"request": good, "artifact_suffix": ".so"}, os.urandom(rng.randrange(1, 1 << 16)))], True
    if kind == 1:  # a measure whose request is hostile JSON, with a payload
        return [frame(MEASURE, {"request": random_json(rng), "artifact_suffix": random_json(rng)},
                      os.urandom(rng.randrange(1 << 20)))], True
    if kind == 2:
        return [frame(DESCRIBE, {"target": random_json(rng)})], True
    if kind == 3:
        return [frame(DESCRIBE, {"target": "opencl:%d:%d" % (rng.randrange(99), rng.randrange(99))})], True
    if kind == 4:  # metadata that is not an object, or not JSON
        return [frame(MEASURE, rng.choice([b"[1,2]", b"{", b"\xff\xfe", b"null", os.urandom(64)]))], False
    if kind == 5:  # another version, an unknown type, a payload over the limit
        return [rng.choice([frame(MEASURE, {}, version=9), frame(999, {}), frame(MEASURE, {}, announced=2**32 - 1)])], False
    if kind == 6:  # a message a server does not take
        return [frame(rng.choice([CHALLENGE, WELCOME, RESULT, ERROR, 7, 9]), random_json(rng) if rng.random() < 0.5 else {})], False
    if kind == 7:  # random bytes
        return [os.urandom(rng.randrange(1, 256))], False
    return [frame(MEASURE, {"request": good}, b"x" * 1000)[:rng.randrange(16, 1000)]], False  # truncated, then gone


def resident_mib(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True, help="the server's pid, for its resident memory")
    parser.add_argument("--frames", type=int, default=10000)
    parser.add_argument("--every", type=int, default=1000, help="frames between memory samples")
    parser.add_argument("--seed", type=int, default=1)
    arguments = parser.parse_args()
    rng = random.Random(arguments.seed)
    sent, sessions, start = 0, 0, time.time()
    print("frames sessions seconds resident_mib", flush=True)
    print(0, 0, 0.0, "%.1f" % resident_mib(arguments.pid), flush=True)
    next_sample = arguments.every
    while sent < arguments.frames:
        sock = session(arguments.port)
        sessions += 1
        try:
            for _ in range(rng.randrange(1, 20)):
                frames, answered = hostile_frames(rng)
                for data in frames:
                    sock.sendall(data)
                    sent += 1
                if not answered:
                    break
                receive(sock)
        except (ConnectionError, OSError, AssertionError, ValueError):
            pass
        finally:
            sock.close()
        if sent >= next_sample:
            print(sent, sessions, "%.1f" % (time.time() - start), "%.1f" % resident_mib(arguments.pid), flush=True)
            next_sample += arguments.every
    time.sleep(1)
    print(sent, sessions, "%.1f" % (time.time() - start), "%.1f" % resident_mib(arguments.pid), flush=True)


if __name__ == "__main__":
    main()
