"""`python -m mmrig ...`: the `mmrig` command line."""

import sys

from mmrig.cli import main

sys.exit(main())
