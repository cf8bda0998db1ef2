"""`python -m rsp_plugin.cli ...`: the same as `rsp-plugin ...`."""

import sys

from .command_line import main

sys.exit(main())
