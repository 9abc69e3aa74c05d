"""README's examples as tests: a section's first ``python`` block, run as pasted."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

README = Path(__file__).parent.parent / "README.md"


def run_readme_block(heading: str, tmp_path: Path, suffix: str = "") -> str:
    """The first ```python block of README's section ``## <heading>...`` (plus ``suffix``), run
    in a fresh process in ``tmp_path``; asserts it exits 0 and returns its stdout."""
    section = README.read_text().split(f"\n## {heading}")[1].split("\n## ")[0]
    code = section.split("```python\n")[1].split("```")[0]
    (tmp_path / "example.py").write_text(code + suffix)
    done = subprocess.run([sys.executable, "example.py"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout
