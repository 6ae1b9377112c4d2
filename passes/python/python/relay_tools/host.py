"""The host of relay.toml's Python passes:
``python -m relay_tools.host module:attribute``.

``relay`` runs it as an external pass (the ``relay`` binary does not link
Python): it reads a module as Relay text on stdin, imports ``attribute``
from ``module`` (the directory of relay.toml comes first on the import
path), runs it under a PassContext made from the environment the external
pass protocol sets (``RELAY_OPT_LEVEL``, ``RELAY_TARGET``, ``RELAY_CONFIG``)
and writes the result as Relay text on stdout. A failure writes the
traceback to stderr, the last line saying what failed, and exits with 1.
"""

import contextlib
import importlib
import json
import os
import sys
import traceback

from . import parser
from .target import Target
from .transform import Pass, PassContext

USAGE = "usage: python -m relay_tools.host module:attribute  (Relay text on stdin and stdout)"


def load_pass(spec):
    """The pass named by ``module:attribute``: a pass object, or a pass
    class made by a decorator (instantiated without arguments)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"`{spec}` is not `module:attribute`")
    obj = importlib.import_module(module_name)
    for part in attribute.split("."):
        obj = getattr(obj, part)
    if isinstance(obj, type) and issubclass(obj, Pass):
        obj = obj()
    if not isinstance(obj, Pass):
        raise TypeError(
            f"`{spec}` is a {type(obj).__name__}, not a pass: decorate it with "
            "tvm.transform.module_pass or relay.transform.function_pass"
        )
    return obj


def run(spec, text, environ):
    """The module ``text`` after the pass ``spec``, as Relay text."""
    the_pass = load_pass(spec)
    module = parser.parse(text, "<input>")
    opt_level = int(environ.get("RELAY_OPT_LEVEL") or 2)
    config = json.loads(environ.get("RELAY_CONFIG") or "{}")
    target = environ.get("RELAY_TARGET") or None
    with PassContext(opt_level=opt_level, config=config):
        with Target(target) if target else contextlib.nullcontext():
            result = the_pass(module)
    return result._reparseable_text()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(USAGE, file=sys.stderr)
        return 2
    spec = argv[0]
    sys.path.insert(0, os.getcwd())
    try:
        output = run(spec, sys.stdin.read(), os.environ)
    except Exception as error:  # every failure is reported, none is fatal to relay
        traceback.print_exc(file=sys.stderr)
        print(f"{spec}: {type(error).__name__}: {error}".splitlines()[0], file=sys.stderr)
        return 1
    sys.stdout.write(output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
