"""What a sandbox needs from the host: a Python interpreter with its stdlib, the runner's code and
the few packages bots may import.

Only these are bound into the sandbox. The runner's code (hosted_runner.py, the SDK, the signing
module and any game text adapter) is copied into a private staging directory, so the sandbox sees
those files and nothing else of the project. Each package of BOT_PACKAGES (numpy) is bound
read-only by its own folder (and the folder of the libraries its wheel bundles, numpy.libs) at
/packages inside, never the site-packages around it.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import logging
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
_STAGED_FILES = (
    "shared/sandbox/hosted_runner.py",
    "shared/botsdk/__init__.py",
    "shared/botsdk/server.py",
    "shared/botsdk/replay.py",
    "shared/protocol/signing.py",
    "shared/states.py",
)
_EMPTY_PACKAGES = ("shared", "shared/protocol", "shared/games")
BOT_PACKAGES = ("numpy",)
"""Packages from outside the standard library that bots may import (the gate's allow-list names
them too): pure computation, read-only, with nothing of the host in them."""
PACKAGES_INSIDE = "/packages"
"""Where a bwrap sandbox sees them (the runner puts it on sys.path)."""
SINGLE_THREADED = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
"""Set in every sandbox: numpy's OpenBLAS would otherwise start a thread per host core at import,
each with a stack and buffers counted against the sandbox's memory and task limits."""

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PythonRuntime:
    """An interpreter and the host paths it needs, bound read-only at the same place inside."""

    executable: str
    binds: tuple[str, ...]
    hidden: tuple[str, ...]
    """Directories inside a bind to cover with an empty tmpfs (site-packages)."""
    packages: tuple[str, ...] = ()
    """Host folders of BOT_PACKAGES (and their bundled libraries), each bound at
    PACKAGES_INSIDE/<its name>."""


def _reachable_by_others(path: str) -> bool:
    """True if a user with no relation to the owner can traverse to `path` and read/execute it."""
    current = Path(path)
    for parent in [current, *current.parents]:
        try:
            mode = os.stat(parent).st_mode
        except OSError:
            return False
        if stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
            return False
    return bool(os.stat(path).st_mode & stat.S_IROTH)


def _candidates() -> list[str]:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    found = [
        os.path.join(sys.base_prefix, "bin", version),
        f"/usr/bin/{version}",
        f"/usr/local/bin/{version}",
    ]
    return [os.path.realpath(p) for p in found if os.path.exists(p)]


_PROBE = (
    "import json,sys,sysconfig;p=sysconfig.get_paths();"
    "print(json.dumps({'exe':sys.executable,'stdlib':p['stdlib'],'platstdlib':p['platstdlib'],"
    "'purelib':p['purelib'],'platlib':p['platlib'],'libdir':sysconfig.get_config_var('LIBDIR'),"
    "'ldlibrary':sysconfig.get_config_var('LDLIBRARY'),'shared':sysconfig.get_config_var('Py_ENABLE_SHARED')}))"
)
_runtime_cache: dict[bool, PythonRuntime] = {}
_lock = threading.Lock()


def resolve_runtime(*, drops_privileges: bool) -> PythonRuntime:
    """Pick the same Python version as the host's (sys.base_prefix first) that the sandbox user can
    read; when the runner drops from root to an unprivileged uid, a runtime under a private home
    (e.g. /root/.pyenv) is unreachable, so the system interpreter of that version is used instead."""
    with _lock:
        if drops_privileges in _runtime_cache:
            return _runtime_cache[drops_privileges]
        for exe in _candidates():
            if drops_privileges and not _reachable_by_others(exe):
                continue
            info = json.loads(
                subprocess.run(
                    [exe, "-I", "-S", "-c", _PROBE], capture_output=True, text=True, check=True, timeout=10
                ).stdout
            )
            binds = {exe, os.path.realpath(info["stdlib"]), os.path.realpath(info["platstdlib"])}
            if info["shared"] and info["libdir"] and info["ldlibrary"]:
                lib = Path(info["libdir"]) / info["ldlibrary"]
                for path in {lib, lib.resolve()}:
                    if path.exists():
                        binds.add(str(path))
            for libdir in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64"):
                if os.path.isdir(libdir):
                    binds.add(libdir)
            if os.path.exists("/etc/ld.so.cache"):
                binds.add("/etc/ld.so.cache")
            hidden = tuple(
                sorted(
                    p
                    for p in {info["purelib"], info["platlib"]}
                    if os.path.isdir(p) and any(p.startswith(b + "/") for b in binds)
                )
            )
            runtime = PythonRuntime(
                executable=exe,
                binds=tuple(sorted(binds)),
                hidden=hidden,
                packages=bot_package_dirs(drops_privileges=drops_privileges),
            )
            _runtime_cache[drops_privileges] = runtime
            return runtime
        raise RuntimeError("no Python interpreter reachable by the sandbox user was found")


def bot_package_dirs(*, drops_privileges: bool) -> tuple[str, ...]:
    """The host folders of BOT_PACKAGES installed here, with the sibling folder of libraries their
    wheels bundle (`numpy.libs`, found by numpy's extensions through `$ORIGIN/../numpy.libs`). A
    package the sandbox user could not read (a private home, when the worker drops from root) is
    left out with a warning: importing it then fails inside the bot like any missing module."""
    folders: list[str] = []
    for name in BOT_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            log.warning("bots may import %s, but it is not installed here", name)
            continue
        folder = Path(next(iter(spec.submodule_search_locations))).resolve()
        libs = folder.with_name(f"{name}.libs")
        found = [folder, libs] if libs.is_dir() else [folder]
        if drops_privileges and not all(_reachable_by_others(str(path)) for path in found):
            log.warning("bots may import %s, but its folder %s is not readable by sandboxes", name, folder)
            continue
        folders += [str(path) for path in found]
    return tuple(folders)


_packages_dir: str | None = None


def staged_packages_dir(folders: tuple[str, ...]) -> str:
    """For the unsandboxed `process` backend: links to the package folders, in a folder of their own
    (so the bot's sys.path gets these packages, not the site-packages around them). Kept apart from
    the staged code, which bwrap sandboxes see, so that no sandbox learns where the host keeps them."""
    global _packages_dir
    with _lock:
        if _packages_dir is None:
            _packages_dir = tempfile.mkdtemp(prefix="arena-sandbox-packages-")
            os.chmod(_packages_dir, 0o755)
            atexit.register(shutil.rmtree, _packages_dir, True)
            for folder in folders:
                Path(_packages_dir, Path(folder).name).symlink_to(folder, target_is_directory=True)
        return _packages_dir


_stage_dir: str | None = None


def staged_code_dir(games: tuple[str, ...] = ()) -> str:
    """A private, read-only-for-others copy of the runner's files (created once per process)."""
    global _stage_dir
    with _lock:
        if _stage_dir is None:
            _stage_dir = tempfile.mkdtemp(prefix="arena-sandbox-code-")
            os.chmod(_stage_dir, 0o755)
            atexit.register(shutil.rmtree, _stage_dir, True)
            for package in _EMPTY_PACKAGES:
                _write(Path(_stage_dir, package, "__init__.py"), b"")
            for rel in _STAGED_FILES:
                staged_name = "hosted_runner.py" if rel.endswith("hosted_runner.py") else rel
                _write(Path(_stage_dir, staged_name), (PROJECT_ROOT / rel).read_bytes())
        for game in games:
            adapter = PROJECT_ROOT / "shared" / "games" / game / "codingame.py"
            target = Path(_stage_dir, "shared", "games", game, "codingame.py")
            if adapter.exists() and not target.exists():
                _write(target.with_name("__init__.py"), b"")
                _write(target, adapter.read_bytes())
        return _stage_dir


def game_adapter_exists(game: str) -> bool:
    return game.isidentifier() and (PROJECT_ROOT / "shared" / "games" / game / "codingame.py").exists()


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    for parent in [path.parent, *path.parent.parents]:
        if _stage_dir is not None and str(parent).startswith(_stage_dir):
            os.chmod(parent, 0o755)
    path.write_bytes(data)
    os.chmod(path, 0o644)
