from plumbline.common.migrations import run_env
from plumbline.services.hooks.models import metadata

run_env(metadata)
