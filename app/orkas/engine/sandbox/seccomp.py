"""A seccomp filter for confined commands: no kernel keyring.

The kernel's key store is not namespaced by bubblewrap: a key one command adds to its user keyring (and
opens to all with keyctl_setperm) is still there for the next command, the one place a command nobody
approved could leave something for a later one (the second red team did exactly that). A confined command
has no use for it, so add_key, request_key and keyctl fail with EPERM. The filter is classic BPF, built here
(libseccomp's Python binding is not on every machine) for the architecture Orkas runs on and its 32-bit
sibling (a 64-bit process can still make 32-bit system calls); bubblewrap loads it (`--seccomp FD`).
"""

from __future__ import annotations

import errno
import os
import platform
import struct

LD_ABS_W = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
RET_K = 0x06  # BPF_RET | BPF_K
ALLOW = 0x7FFF0000
DENY = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO
X32 = 0x40000000
# (audit architecture, [add_key, request_key, keyctl]) per machine
ARCHES: dict[str, list[tuple[int, list[int]]]] = {
    "x86_64": [
        (0xC000003E, [248, 249, 250, X32 | 248, X32 | 249, X32 | 250]),
        (0x40000003, [286, 287, 288]),  # i386
    ],
    "aarch64": [
        (0xC00000B7, [217, 218, 219]),
        (0x40000028, [309, 310, 311]),  # arm
    ],
}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter for `machine` (this one by default), or None where it is not known."""
    sections = ARCHES.get(machine or platform.machine())
    if sections is None:
        return None
    out: list[bytes] = []
    for arch, numbers in sections:
        # ld arch; jne → next section; ld nr; jeq each → deny; allow; deny
        size = 3 + len(numbers) + 2
        out.append(_op(LD_ABS_W, 4))
        out.append(_op(JEQ_K, arch, 0, size - 2))
        out.append(_op(LD_ABS_W, 0))
        for i, number in enumerate(numbers):
            out.append(_op(JEQ_K, number, len(numbers) - i, 0))
        out.append(_op(RET_K, ALLOW))
        out.append(_op(RET_K, DENY))
    out.append(_op(RET_K, ALLOW))  # another architecture: its calls are not these
    return b"".join(out)


def filter_fd() -> int | None:
    """A pipe's read end holding the filter, for `bwrap --seccomp FD` (pass it to the child, then close it);
    None where no filter is known for this machine."""
    code = program()
    if code is None:
        return None
    read, write = os.pipe()
    try:
        os.write(write, code)
    finally:
        os.close(write)
    return read
