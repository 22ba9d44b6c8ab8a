from __future__ import annotations

from genstamp.cli import main

raise SystemExit(main())
