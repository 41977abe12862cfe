"""hearthd's OpenMP wait policy: threads sleep, not spin, while they wait (a shared machine's worst case)."""

from __future__ import annotations

import os
import subprocess
import sys


def test_hearthd_sets_a_passive_wait_policy_unless_the_user_chose_one() -> None:
    code = "import os, hearthd.agent.model; print(os.environ['OMP_WAIT_POLICY'])"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "PASSIVE"
    out = subprocess.run([sys.executable, "-c", code], env={**env, "OMP_WAIT_POLICY": "ACTIVE"},
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ACTIVE"
