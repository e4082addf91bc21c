"""What a sandboxed program may read, and the kernel rules that enforce it (stdlib only).

An agent's program must not reach the answer key: the ground-truth files in silicolab's
package data, the package's source, the run directory, the user's home. So the sandbox
child allows reads only of

* its working directory (the code and the data it was given) and the ``writable_dirs``;
* what the interpreter and the installed libraries need: the interpreter's prefixes
  (``sys.prefix``, ``sys.base_prefix``, ...) and its site-packages directories, *minus*
  every ``silicolab`` entry in them (the package, its editable ``.pth`` and finder);
* the system trees shared libraries, locale and time-zone data live in (``/usr``, ``/lib*``,
  ``/bin``, ``/sbin``), ``/proc``, ``/sys``, ``/dev`` and a few files of ``/etc`` that the
  dynamic loader and the time functions read (not ``/etc/passwd``).

:class:`ReadPolicy` answers "may this path be read?" for the audit hook (every Python-level
``open``, ``os.listdir`` and ``os.scandir``), and :func:`apply_landlock` asks the Linux
kernel (Landlock, 5.13 or later) to refuse every other read and write of this process and
its children, which also stops C code and ctypes. :mod:`_boot` loads this file by
path before the agent's code runs; nothing here imports silicolab.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
from collections.abc import Iterable, Sequence

#: System trees that hold shared libraries, interpreters, locale and zoneinfo data.
SYSTEM_TREES = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin")
#: Kernel interfaces that libraries read (CPU count, memory, ``/dev/urandom``, ``/dev/shm``).
KERNEL_TREES = ("/proc", "/sys", "/dev")
#: Single files of ``/etc`` that the loader, ``time`` and ``mimetypes`` read.
ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/mime.types",
)
#: Directories and files in a site directory with these name starts are silicolab's; its
#: metadata (``.dist-info``, ``.egg-info``) stays readable: ``importlib.metadata`` scans
#: every distribution's entry points, and it holds no data.
HIDDEN_NAMES = ("silicolab", "_editable_impl_silicolab", "__editable__.silicolab")
METADATA = (".dist-info", ".egg-info")

# Landlock ABI (include/uapi/linux/landlock.h)
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_PR_SET_NO_NEW_PRIVS = 38
_RULE_PATH_BENEATH = 1
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_MAKE_AND_REMOVE = sum(1 << bit for bit in range(4, 13))  # remove dir/file, make char..sym
_REFER, _TRUNCATE = 1 << 13, 1 << 14  # ABI 2 and ABI 3
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE
_READ = _READ_FILE | _READ_DIR | _EXECUTE


def _real(path: str) -> str:
    return os.path.realpath(path)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _is_site_dir(path: str) -> bool:
    return os.path.basename(path) in ("site-packages", "dist-packages")


class ReadPolicy:
    """The read allow-list of one sandboxed process.

    ``work_roots`` (the working directory and the writable directories) and ``trees`` are
    readable with everything beneath them, except the ``hidden`` trees (silicolab's package
    and metadata, found in the interpreter's search path); ``files`` are single readable
    files. Paths are compared after :func:`os.path.realpath`, so symlinks cannot lead out.
    """

    def __init__(
        self,
        work_roots: Sequence[str],
        trees: Iterable[str],
        files: Iterable[str],
        hidden: Iterable[str],
    ):
        self.work_roots = tuple(_real(p) for p in work_roots)
        self.hidden = tuple(sorted({_real(p) for p in hidden}))
        readable = {_real(p) for p in trees if os.path.exists(p)}
        self.trees = tuple(sorted(t for t in readable if not self.is_hidden(t)))
        self.files = frozenset(_real(p) for p in files if os.path.isfile(p))

    @classmethod
    def for_interpreter(
        cls, work_roots: Sequence[str], search_path: Sequence[str], own: Sequence[str] = ()
    ) -> ReadPolicy:
        """The policy for this interpreter: its prefixes and site directories (from
        ``search_path``, normally ``sys.path``), the system trees and ``/etc`` files, with
        silicolab's entries hidden (see :func:`silicolab_paths`) except the sandbox's
        ``own`` source files (libraries that walk the stack read the boot's source lines)."""
        prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
        entries = [p for p in search_path if p and os.path.isdir(p)]
        hidden = silicolab_paths(entries)
        trees = [*SYSTEM_TREES, *KERNEL_TREES, *prefixes, *entries]
        return cls(work_roots, trees, (*ETC_FILES, *own), hidden)

    def is_hidden(self, full: str) -> bool:
        """Whether the resolved path ``full`` is silicolab's."""
        return any(_within(full, h) for h in self.hidden)

    def allows(self, full: str) -> bool:
        """Whether the resolved path ``full`` may be read (or listed)."""
        if any(_within(full, root) for root in self.work_roots):
            return True
        if full in self.files:
            return True
        return not self.is_hidden(full) and any(_within(full, t) for t in self.trees)


def silicolab_paths(entries: Iterable[str]) -> list[str]:
    """silicolab's files and directories reachable from the search-path ``entries``.

    In a site directory: every child whose name starts with one of :data:`HIDDEN_NAMES`
    (the package, an editable install's ``.pth`` and finder; not its metadata). Any other
    entry that holds a ``silicolab`` package (a source tree put on the path by an editable
    install or ``PYTHONPATH``) is hidden whole. The source tree this file lives in is
    hidden too.
    """
    # this file is src/silicolab/runtime/sandbox/_reads.py: four levels up is src/
    here = os.path.abspath(__file__)
    for _ in range(4):
        here = os.path.dirname(here)
    hidden = [here] if os.path.isdir(os.path.join(here, "silicolab")) else []
    for entry in entries:
        if _is_site_dir(entry):
            try:
                names = os.listdir(entry)
            except OSError:
                continue
            hidden += [
                os.path.join(entry, n)
                for n in names
                if n.startswith(HIDDEN_NAMES) and not n.endswith(METADATA)
            ]
        elif os.path.isdir(os.path.join(entry, "silicolab")):
            hidden.append(entry)
    return hidden


class SilicolabBlocker:
    """A ``sys.meta_path`` finder that refuses ``silicolab`` and its submodules, so no
    other finder can load them from a path this policy forgot."""

    def __init__(self, refuse: object):
        self._refuse = refuse  # called with the module name; raises

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "silicolab" or name.startswith("silicolab."):
            self._refuse(name)  # type: ignore[operator]


def hide_silicolab(policy: ReadPolicy, refuse: object) -> None:
    """Take silicolab's entries off ``sys.path`` (and their cached finders) and put a
    :class:`SilicolabBlocker` first on ``sys.meta_path``."""
    for entry in list(sys.path):
        if entry and policy.is_hidden(_real(entry)):
            sys.path.remove(entry)
            sys.path_importer_cache.pop(entry, None)
    for name in [m for m in sys.modules if m == "silicolab" or m.startswith("silicolab.")]:
        del sys.modules[name]
    sys.meta_path.insert(0, SilicolabBlocker(refuse))


# -- Landlock -------------------------------------------------------------------------------
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or 0 when Landlock is missing or disabled."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), 1)
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def _add_rule(libc: ctypes.CDLL, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            access &= _FILE_RIGHTS
        attr = ctypes.create_string_buffer(struct.pack("=Qi", access, fd))
        if libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, attr, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"landlock_add_rule {path!r}: {os.strerror(err)}")
    finally:
        os.close(fd)


def _grant(libc: ctypes.CDLL, ruleset: int, path: str, access: int, hidden: tuple[str, ...]):
    """Grant ``access`` beneath ``path`` but not to the ``hidden`` trees inside it: a
    directory with hidden parts gets only listing rights, and its children are granted
    one by one."""
    if any(_within(path, h) for h in hidden):
        return
    if not any(_within(h, path) for h in hidden):
        _add_rule(libc, ruleset, path, access)
        return
    _add_rule(libc, ruleset, path, _READ_DIR)
    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        _grant(libc, ruleset, os.path.join(path, name), access, hidden)


def apply_landlock(policy: ReadPolicy, abi: int) -> None:
    """Restrict this process and its future children, irreversibly, to ``policy``'s reads
    and to writes inside its working roots and ``/dev``. Raises :class:`OSError` when the
    kernel refuses (the caller then relies on the audit hook alone)."""
    libc = _libc()
    handled = _READ | _WRITE_FILE | _MAKE_AND_REMOVE
    handled |= (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    attr = ctypes.create_string_buffer(struct.pack("=Q", handled))
    ruleset = libc.syscall(_SYS_CREATE_RULESET, attr, ctypes.c_size_t(8), 0)
    if ruleset < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock_create_ruleset: {os.strerror(err)}")
    try:
        for tree in policy.trees:
            _grant(libc, ruleset, tree, _READ, policy.hidden)
        for name in policy.files:
            _add_rule(libc, ruleset, name, _READ_FILE)
        for root in (*policy.work_roots, "/dev"):
            _add_rule(libc, ruleset, root, handled)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")
        if libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"landlock_restrict_self: {os.strerror(err)}")
    finally:
        os.close(ruleset)
