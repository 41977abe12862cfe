"""hearthd: a private voice assistant daemon that runs on your own machine."""

__version__ = "0.1.0"
