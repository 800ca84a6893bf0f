"""The seccomp filter of every host sandbox command: a classic BPF program, built here (no
libseccomp binding is needed), that bwrap loads from a file descriptor (`--seccomp FD`) just
before it runs the command; bwrap sets no_new_privs with it, and the filter is inherited by
every process the command starts.

Refused with EPERM (the reference is Docker's default profile; the command has no capability
left, so most of these would fail anyway: the filter closes the kernel's code behind them):

- the kernel keyrings: keyctl, add_key, request_key (the keyrings are shared by every process
  of a uid and by the session; with these refused they are unreachable);
- ptrace, process_vm_readv, process_vm_writev: refused entirely, not only towards processes
  outside: a command's processes may share their uid with bwrap's own (HEMRA not root) and
  with the model relay; gdb and strace do not work in the host sandbox;
- mounts: mount, umount2, pivot_root and the new mount API (open_tree, move_mount, fsopen,
  fsconfig, fsmount, fspick, mount_setattr);
- namespaces: setns, and unshare and clone with any namespace flag (a user namespace would give
  back every capability inside it); clone3, whose flags a filter cannot read, fails with ENOSYS
  so that the C library falls back to clone;
- the kernel itself: init_module, finit_module, delete_module, kexec_load, kexec_file_load,
  reboot, swapon, swapoff, bpf, perf_event_open, userfaultfd, open_by_handle_at.

Only the host's native ABI is let through: on x86_64 the i386 (int 0x80) and x32 calls, whose
numbers differ, fail with ENOSYS; on aarch64, the 32-bit arm ones. On another architecture the
sandbox refuses to start (SandboxError).
"""

import functools
import platform
import struct

from hemra.services.environments.errors import SandboxError

_ERRNO, _ALLOW = 0x00050000, 0x7FFF0000  # SECCOMP_RET_*
_EPERM, _ENOSYS = 1, 38
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|op|K, BPF_RET|K
#: seccomp_data: nr (u32), arch (u32), instruction pointer (u64), args (u64 each, little-endian).
_NR, _ARCH, _ARG0 = 0, 4, 16
_X32 = 0x40000000
#: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME.
NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x80

#: Refused syscalls, by machine.
_X86_64 = {
    "keyctl": 250,
    "add_key": 248,
    "request_key": 249,
    "ptrace": 101,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "setns": 308,
    "init_module": 175,
    "finit_module": 313,
    "delete_module": 176,
    "kexec_load": 246,
    "kexec_file_load": 320,
    "reboot": 169,
    "swapon": 167,
    "swapoff": 168,
    "bpf": 321,
    "perf_event_open": 298,
    "userfaultfd": 323,
    "open_by_handle_at": 304,
}
_AARCH64 = {
    "keyctl": 219,
    "add_key": 217,
    "request_key": 218,
    "ptrace": 117,
    "process_vm_readv": 270,
    "process_vm_writev": 271,
    "mount": 40,
    "umount2": 39,
    "pivot_root": 41,
    "setns": 268,
    "init_module": 105,
    "finit_module": 273,
    "delete_module": 106,
    "kexec_load": 104,
    "kexec_file_load": 294,
    "reboot": 142,
    "swapon": 224,
    "swapoff": 225,
    "bpf": 280,
    "perf_event_open": 241,
    "userfaultfd": 282,
    "open_by_handle_at": 265,
}
#: The same numbers on every architecture (the new mount API, clone3).
_COMMON = {
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
}
_CLONE3 = 435
#: machine -> (AUDIT_ARCH_*, refused, (unshare, clone), refuses x32 numbers)
_MACHINES = {
    "x86_64": (0xC000003E, _X86_64, (272, 56), True),
    "aarch64": (0xC00000B7, _AARCH64, (97, 220), False),
}


def refused(machine: str | None = None) -> dict[str, int]:
    """The syscalls refused outright on `machine` (this host's by default), by name."""
    return {**_machine(machine)[1], **_COMMON}


@functools.cache  # every host command passes it to bwrap: built once per machine
def program(machine: str | None = None) -> bytes:
    """The filter for `machine` (this host's by default), as bwrap reads it: sock_filter
    entries (u16 code, u8 jt, u8 jf, u32 k) in the host's byte order."""
    arch, _, (unshare, clone), x32 = _machine(machine)
    blocked = sorted(refused(machine).values())
    # Layout: checks, then the shared tail: [flags check] ALLOW, EPERM, ENOSYS.
    checks: list[tuple[int, int, str, int]] = [
        (_LD_ABS, 0, "", _ARCH),
        (_JEQ, 1, "", arch),
        (_RET, 0, "", _ERRNO | _ENOSYS),  # another ABI: its numbers are not these
        (_LD_ABS, 0, "", _NR),
    ]
    if x32:
        checks.append((_JGE, 0, "enosys", _X32))
    checks += [(_JEQ, 0, "eperm", nr) for nr in blocked]
    checks += [(_JEQ, 0, "enosys", _CLONE3), (_JEQ, 0, "flags", unshare), (_JEQ, 0, "flags", clone)]
    tail = [
        ("allow", (_RET, 0, 0, _ALLOW)),
        ("flags", (_LD_ABS, 0, 0, _ARG0)),
        ("", (_JSET, 1, 0, NAMESPACE_FLAGS)),
        ("", (_RET, 0, 0, _ALLOW)),
        ("eperm", (_RET, 0, 0, _ERRNO | _EPERM)),
        ("enosys", (_RET, 0, 0, _ERRNO | _ENOSYS)),
    ]
    where = {label: len(checks) + i for i, (label, _) in enumerate(tail) if label}
    code = []
    for i, (op, jt, target, k) in enumerate(checks):
        if target:  # a jump to the tail when equal, on to the next check when not
            jt = where[target] - i - 1
        code.append(struct.pack("=HBBI", op, jt, 0, k))
    code += [struct.pack("=HBBI", *entry) for _, entry in tail]
    return b"".join(code)


def _machine(machine: str | None):
    name = machine or platform.machine()
    if name not in _MACHINES:
        raise SandboxError(f"the host sandbox has no seccomp filter for {name} (only {', '.join(_MACHINES)})")
    return _MACHINES[name]
