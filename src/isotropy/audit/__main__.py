"""``python -m isotropy.audit``: the same as the console script ``isotropy-audit``."""

import sys

from isotropy.audit.orchestration import main

sys.exit(main())
