"""``python -m softswitch.stf PROGRAM.p4 TEST.stf``."""

import sys

from .runner import main

sys.exit(main())
