"""The README's Python example, as written there, from the repository
root (the acceptance line: install, then open, table, to_pandas)."""

import os
import re

from conftest import ROOT


def readme_blocks():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    part = text[text.index("\n## Python\n"):]
    return re.findall(r"```python\n(.*?)```", part, re.S)


def test_the_three_line_example_runs():
    first = readme_blocks()[0]
    assert "tracemux.open" in first and ".to_pandas()" in first
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        scope = {}
        exec(compile(first, "README.md", "exec"), scope)
    finally:
        os.chdir(here)
    df = scope["df"]
    assert len(df) > 0 and "next_pid" in df.columns
