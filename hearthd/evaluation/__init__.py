"""Scoring the agent: the command suites (evaluate.py), the Berkeley Function Calling Leaderboard (bfcl.py), and the
spoken suites (spoken_suites.py) said by test voices (voices.py) through the whole chain.
Not part of the running daemon: nothing in hearthd.agent, hearthd.daemon or hearthd.tools imports it."""
