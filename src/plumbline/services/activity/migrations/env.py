from plumbline.common.migrations import run_env
from plumbline.services.activity.models import metadata

run_env(metadata)
