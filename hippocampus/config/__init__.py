"""The config: `from hippocampus.config import Config, load` (the schema's names and the loader's four)."""
from hippocampus.config.schema import *  # noqa: F401,F403 - the schema's blocks and constants
from hippocampus.config.schema import _all_paths, _block_type  # noqa: F401 - private, so not in the * above
from hippocampus.config.loader import build, load, redacted, resolve_path  # noqa: F401
