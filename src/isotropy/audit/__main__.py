"""``python -m isotropy.audit``: the same as the console script ``isotropy-audit``."""

import sys

from isotropy.audit import main

sys.exit(main())
