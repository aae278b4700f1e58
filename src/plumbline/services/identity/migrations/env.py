from plumbline.common.migrations import run_env
from plumbline.services.identity.models import metadata

run_env(metadata)
