"""Every example of samples/python runs (with small sizes where it takes one)."""
import os
import subprocess
import sys

import pytest

EXAMPLES = [("evaluate_timeloop.py", []), ("random_search.py", []),
            ("batch_evaluate.py", ["20000"]), ("custom_searcher.py", [])]


@pytest.mark.parametrize("script,args", EXAMPLES)
def test_example_runs(source, script, args):
    out = subprocess.run([sys.executable, source / "samples/python" / script, *args],
                         capture_output=True, text=True, env=dict(os.environ), timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip()
