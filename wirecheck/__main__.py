import sys

from wirecheck.cli import main

sys.exit(main())
