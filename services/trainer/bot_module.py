"""Run a bot's source (our own exports) as a fresh module, as an imported module would run.

The module is in sys.modules while its code runs, as the sandbox's runner loads a hosted bot:
`dataclasses` looks a class's module up there. Standard library only, so that the search worker
processes that load the hybrid bot start without torch.
"""

from __future__ import annotations

import sys
import types


def load_bot_module(source: str, name: str) -> types.ModuleType:
    """`source` run as the module `name` (its exceptions propagate; sys.modules is restored)."""
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    previous = sys.modules.get(name)
    sys.modules[name] = module
    try:
        exec(compile(source, module.__file__, "exec"), module.__dict__)  # our own exported code
    finally:
        if previous is None:
            del sys.modules[name]
        else:
            sys.modules[name] = previous
    return module
