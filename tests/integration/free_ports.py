"""Loopback ports for test clusters that no other process will take first.

A test writes its layout with ports first and its processes bind them
seconds later. Two things could take a port in between, and both did
(EADDRINUSE at `tessera cluster up` under `ctest -j`):
  * an outgoing connection of any process (another test's cluster): the
    kernel picks its local port from the ephemeral range, which is where
    binding port 0 hands out ports too;
  * another test process picking the same port.
So ports come from below the ephemeral range (net.ipv4.ip_local_port_range),
in blocks of BLOCK_PORTS, and a test process owns a block by holding an
exclusive flock on the block's lock file until it exits; a block with a port
that something else already listens on is skipped.
"""

import fcntl
import os
import socket
import tempfile

BLOCK_PORTS = 32
# Above the dev cluster's 19xxx ports and the anchors' etcd (23791-23803)
# and Redis (263xx) ports.
RANGE_START = 27000
LOCK_DIR = os.path.join(tempfile.gettempdir(), "tessera-test-ports")

_held_locks = []  # open lock files: the blocks this process owns until exit


def _port_range():
    """[low, high) outside the kernel's ephemeral range."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            ephemeral_low, ephemeral_high = (int(v) for v in f.read().split())
    except (OSError, ValueError):
        ephemeral_low, ephemeral_high = 32768, 60999
    if ephemeral_low - RANGE_START >= 4 * BLOCK_PORTS:
        return RANGE_START, ephemeral_low
    return ephemeral_high + 1, 65536


def _bindable(port):
    # SO_REUSEADDR as the servers set it: a port only in TIME_WAIT is usable.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _claim_block():
    """First port of a block this process now owns, every port bindable."""
    os.makedirs(LOCK_DIR, exist_ok=True)
    low, high = _port_range()
    for first in range(low, high - BLOCK_PORTS + 1, BLOCK_PORTS):
        lock = open(os.path.join(LOCK_DIR, f"{first}.lock"), "a")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        if all(_bindable(p) for p in range(first, first + BLOCK_PORTS)):
            _held_locks.append(lock)
            return first
        lock.close()
    raise RuntimeError(f"no free block of {BLOCK_PORTS} loopback ports in [{low}, {high})")


def free_ports(n):
    """n distinct free loopback ports, never handed out before in this
    process nor to a concurrently running test process."""
    ports = []
    while len(ports) < n:
        first = _claim_block()
        ports.extend(range(first, first + BLOCK_PORTS))
    return ports[:n]
