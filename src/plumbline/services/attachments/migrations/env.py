from plumbline.common.migrations import run_env
from plumbline.services.attachments.models import metadata

run_env(metadata)
