from __future__ import annotations

from genstamp.posthook import launch

raise SystemExit(launch())
