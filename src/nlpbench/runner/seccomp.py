"""The seccomp filter bubblewrap loads before a tool runs: the system calls a tool never needs, refused.

:func:`program` compiles it with libseccomp (through ``pyseccomp``) into the
BPF program ``bwrap --seccomp FD`` takes, or returns None where libseccomp is
not installed (the namespaces and dropped capabilities still hold; one log
line says so). The list follows what Flatpak and Docker's default profile
refuse: kernel keyrings, modules, mounting and namespaces (``unshare``,
``setns``, ``clone`` with ``CLONE_NEWUSER``; ``clone3``, whose flags a filter
cannot read, answers ``ENOSYS`` so that the C library falls back to
``clone``), tracing and other processes' memory, ``bpf``, ``perf_event_open``,
``userfaultfd``, ``io_uring``, clocks, swap, reboot, and ``ioctl`` ``TIOCSTI``
(typing into a terminal). Calls of another architecture (32-bit calls on
x86-64) end the process, libseccomp's default for an architecture the filter
does not name. Everything else is allowed: a tool is an ordinary program.
"""

from __future__ import annotations

import errno
import functools
import logging
import os

log = logging.getLogger(__name__)

#: Refused with EPERM.
REFUSED = (
    "_sysctl", "acct", "add_key", "adjtimex", "bpf", "clock_adjtime", "clock_settime", "create_module",
    "delete_module", "fanotify_init", "finit_module", "fsconfig", "fsmount", "fsopen", "fspick",
    "get_kernel_syms", "init_module", "io_uring_enter", "io_uring_register", "io_uring_setup", "ioperm", "iopl",
    "kcmp", "kexec_file_load", "kexec_load", "keyctl", "lookup_dcookie", "mount", "mount_setattr", "move_mount",
    "name_to_handle_at", "nfsservctl", "open_by_handle_at", "open_tree", "perf_event_open", "pidfd_getfd", "pivot_root",
    "process_vm_readv", "process_vm_writev", "ptrace", "query_module", "quotactl", "quotactl_fd", "reboot",
    "request_key", "setns", "settimeofday", "stime", "swapoff", "swapon", "syslog", "sysfs", "umount", "umount2",
    "unshare", "uselib", "userfaultfd", "ustat", "vhangup", "vm86", "vm86old",
)  # fmt: skip
CLONE_NEWUSER = 0x10000000
TIOCSTI, TIOCLINUX = 0x5412, 0x541C


@functools.cache
def program() -> bytes | None:
    """The filter as a BPF program for ``bwrap --seccomp``, or None without libseccomp."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as error:  # OSError: the package is there, libseccomp.so is not
        log.info("tools run without a seccomp filter: libseccomp is not available (%s)", type(error).__name__)
        return None
    refuse = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in REFUSED:
        try:
            rules.add_rule(refuse, name)
        except (OSError, ValueError):  # a call this architecture does not have
            continue
    rules.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for request in (TIOCSTI, TIOCLINUX):
        rules.add_rule(refuse, "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, request))
    with open(os.memfd_create("seccomp"), "w+b") as compiled:
        rules.export_bpf(compiled)
        compiled.seek(0)
        return compiled.read()
