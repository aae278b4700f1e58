from plumbline.common.migrations import run_env
from plumbline.services.testmgmt.models import metadata

run_env(metadata)
