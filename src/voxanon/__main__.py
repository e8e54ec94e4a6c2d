"""``python -m voxanon``."""

import sys

from voxanon.cli import main

sys.exit(main())
