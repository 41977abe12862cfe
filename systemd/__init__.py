"""systemd unit files and the D-Bus policy: data, installed as the package hearthd.systemd (see pyproject.toml)."""
