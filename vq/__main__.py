"""``python -m vq``: the same command as the ``vq`` script."""

from vq.cli import main

if __name__ == "__main__":
    main()
