"""Scoring the agent: the command suites (evaluate.py) and the Berkeley Function Calling Leaderboard (bfcl.py).
Not part of the running daemon: nothing in hearthd.agent, hearthd.daemon or hearthd.tools imports it."""
