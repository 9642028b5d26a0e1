"""Command line: `python -m shared.botsdk.run --module bot.py --port 8080 --secret-env BOT_SECRET`.

The secret is read from an environment variable, never from the command line, so it does not show
up in process listings.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from shared.botsdk.server import serve


def load_module(spec: str) -> ModuleType:
    """Load a bot from a file path (`bots/my_bot.py`) or a dotted module name."""
    if spec.endswith(".py") or os.sep in spec:
        path = Path(spec).resolve()
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise SystemExit(f"cannot load {spec}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[path.stem] = module
        module_spec.loader.exec_module(module)
        return module
    return importlib.import_module(spec)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve a decide(observation) bot over protocol v1.")
    parser.add_argument("--module", required=True, help="bot file (path/to/bot.py) or module name")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, help="TCP port to listen on")
    parser.add_argument("--unix-socket", help="serve on this Unix socket path instead of TCP")
    parser.add_argument("--secret-env", default="ARENA_BOT_SECRET", help="env var holding the secret")
    parser.add_argument(
        "--accept-v1",
        action="store_true",
        help="also accept deprecated v1 signatures (not bound to method and path); see docs/protocol.md",
    )
    args = parser.parse_args(argv)
    secret = os.environ.get(args.secret_env)
    if not secret:
        parser.error(f"environment variable {args.secret_env} is not set")
    if (args.port is None) == (args.unix_socket is None):
        parser.error("give exactly one of --port or --unix-socket")
    module = load_module(args.module)
    decide = getattr(module, "decide", None)
    if not callable(decide):
        parser.error(f"{args.module} has no decide(observation) function")
    init = getattr(module, "init", None)
    where = args.unix_socket or f"http://{args.host}:{args.port}"
    print(f"serving {args.module} on {where}", file=sys.stderr, flush=True)
    serve(
        decide,
        secret=secret,
        host=args.host,
        port=args.port,
        unix_socket=args.unix_socket,
        init=init if callable(init) else None,
        accept_v1=args.accept_v1,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
