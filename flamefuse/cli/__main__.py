"""``python -m flamefuse.cli ARGS``: the ``flamefuse`` command (:func:`flamefuse.cli.main`)."""
import sys

from flamefuse.cli import main

if __name__ == "__main__":
    sys.exit(main())
