"""Write docs/openapi.json: the OpenAPI spec `memstream serve` serves at /openapi.json (a test holds them equal).

    PYTHONPATH=. python scripts/openapi.py
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from memstream.models import make_embedder
from memstream.service import MemoryService, create_app

SPEC = Path(__file__).resolve().parents[1] / "docs" / "openapi.json"

if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as where, \
            MemoryService(Path(where) / "s.db", embedder=make_embedder("hash")) as s:
        SPEC.write_text(json.dumps(create_app(s).openapi(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {SPEC}")
