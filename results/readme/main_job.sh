#!/usr/bin/env bash
# Regenerates the sample output of README.md's first command from a real run: runs the main
# job (`dgatd resonator --quiet`, the same job as the binary with no arguments: the bundled
# cylinder, best device found, without the progress lines), keeps its
# stdout and stderr in results/readme/main_job.txt, and replaces the block between the
# markers `<!-- main-job:begin -->` and `<!-- main-job:end -->` in README.md with it.
# Usage, from the repository root: bash results/readme/main_job.sh [BINARY]
set -euo pipefail
BIN="${1:-target/release/dgatd}"
OUT=$(mktemp -d)
( cd "$OUT" && "$OLDPWD/$BIN" resonator --quiet 2>&1 ) | grep -v "^wrote " > results/readme/main_job.txt
python3 - <<'PY'
import re
text = open("results/readme/main_job.txt").read().rstrip("\n")
readme = open("README.md").read()
begin, end = "<!-- main-job:begin -->", "<!-- main-job:end -->"
i, j = readme.index(begin) + len(begin), readme.index(end)
readme = readme[:i] + "\n```\n" + text + "\n```\n" + readme[j:]
open("README.md", "w").write(readme)
PY
rm -rf "$OUT"
echo "README.md's sample output now from $(head -c 200 results/readme/main_job.txt | head -2)"
