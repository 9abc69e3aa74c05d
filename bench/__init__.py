"""torchlike's benchmark harness: ``python -m bench --help``."""
