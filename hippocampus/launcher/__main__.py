"""`python -m seren_hippocampus`: the family launchers' spelling of `python -m hippocampus`."""
import sys

from hippocampus.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
