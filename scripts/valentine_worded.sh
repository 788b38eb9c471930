#!/usr/bin/env bash
# The valentine scenario with the party only from Isabella's whisper, worded as a person would say it
# (the README's "offline stand-in reads English" table, row "worded"), offline:
#
#   bash scripts/valentine_worded.sh OUT_DIR
#
# It writes, in OUT_DIR, a copy of the bundled town without its party lines (Isabella's situation and
# her routine stroke for the party), a scenario that whispers the party in words ("at hobbs cafe
# tomorrow from five to seven in the evening") and Sam's candidacy as bundled, runs the two days into
# OUT_DIR/run and prints the measures. The bundled files are left as they are.
set -euo pipefail
OUT="${1:?usage: bash scripts/valentine_worded.sh OUT_DIR}"
PY="${PYTHON:-python3}"
MEMSTREAM="${MEMSTREAM:-memstream}"
mkdir -p "$OUT"
"$PY" - "$OUT" <<'EOF'
import sys
from pathlib import Path

from memstream.sim.town.world import default_town_path

out = Path(sys.argv[1])
town = default_town_path().read_text()
for line, plain in [("situation: planning a Valentine's Day party at Hobbs Cafe on February 14th from 5pm",
                     "situation: running Hobbs Cafe"),
                    ("activity: plan the Valentine's Day party", "activity: tidy up the cafe")]:
    if line not in town:
        sys.exit(f"the bundled town no longer has the line {line!r}; update this script")
    town = town.replace(line, plain)
(out / "town.yaml").write_text(town)
(out / "scenario.yaml").write_text('''name: valentine-worded
description: the valentine set-up with the party only from the whisper, worded as a person would say it
town: town.yaml
start: "2023-02-13T06:00:00-08:00"
hours: 48
whispers:
- agent: Isabella Rodriguez
  text: Isabella Rodriguez is throwing a Valentine's Day party at hobbs cafe tomorrow from five to seven in the evening and wants to invite everyone she meets
- agent: Sam Moore
  text: Sam Moore is running for mayor in the local election and wants to tell people about his candidacy
''')
EOF
"$MEMSTREAM" run --scenario "$OUT/scenario.yaml" --out "$OUT/run"
"$MEMSTREAM" measure diffusion "$OUT/run" --fact "Valentine's Day party"
"$MEMSTREAM" measure diffusion "$OUT/run" --fact "running for mayor"
"$MEMSTREAM" measure network "$OUT/run"
"$MEMSTREAM" measure attendance "$OUT/run" --place "Hobbs Cafe" --from 2023-02-14T17:00:00-08:00 \
    --to 2023-02-14T19:00:00-08:00 --invited-fact "Valentine's Day party"
