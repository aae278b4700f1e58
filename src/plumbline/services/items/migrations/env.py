from plumbline.common.migrations import run_env
from plumbline.services.items.models import metadata

run_env(metadata)
