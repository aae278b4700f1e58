from plumbline.common.migrations import run_env
from plumbline.services.reports.models import metadata

run_env(metadata)
