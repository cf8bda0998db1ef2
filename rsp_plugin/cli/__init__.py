"""The command line: `command_line.py` parses the arguments and calls a runner, one module per command.

A runner builds the engine (`rsp_plugin.runtime.engine`), feeds it from the sources the
user named (`rsp_plugin.io`) and writes what comes out. It sits on top of
everything else: nothing below imports from here.
"""

from .command_line import main

__all__ = ["main"]
