"""metacog: a nervous system for Claude Code agents."""

__version__ = "0.1.0"
