"""``python -m hwlib``: the command-line calculator (``hwlib.cli``)."""

from hwlib.cli import main

raise SystemExit(main())
