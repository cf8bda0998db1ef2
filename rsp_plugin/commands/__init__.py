"""The command line's runners, one module per command: they sit on top of everything else.

`rsp_plugin.cli` parses the arguments and calls a runner here; a runner builds
the engine (`rsp_plugin.runtime`), feeds it from the sources the user named and
writes what comes out. Data flows one way: sources -> engine -> writers.
"""
