"""`python -m metacog`: the command line (hooks/cli.sh runs it this way, with -I)."""

from metacog.cli import run

if __name__ == "__main__":
    run()
