from plumbline.common.migrations import run_env
from plumbline.services.baselines.models import metadata

run_env(metadata)
