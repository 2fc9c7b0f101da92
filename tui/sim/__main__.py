"""``python -m tui.sim``: run one simulated SGLang (or vLLM) server in the foreground."""

import sys

from tui.sim.sim_main import main

raise SystemExit(main(sys.argv[1:]))
