"""rights: every input's datasheet, judged by the licence policy before anything is screened.

Runs at the start of the ingest stage: the datasheets are read (tasks/datasheets.py), the
policy decides (tasks/licences.py), a refused licence stops the run naming the input and its
licence, and the `DataRights` go on to the approval (the review, the signed record), the
lineage, the tracked run and the model card.
"""

from __future__ import annotations

import logging

from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE

from platforms.blob import AzureStorageConfig
from platforms.datasheet import DataRights, Datasheet
from tasks.datasheets import read_rights
from tasks.ingest_inputs import expand_inputs
from tasks.licences import LicencePolicy, judge_licences
from tasks.records import TaskType
from tasks.review import rights_markdown

log = logging.getLogger(__name__)


class LicenceRefused(ValueError):
    """An input's licence is refused by `approval.licences`: the run stops before screening."""


def check_rights(
    task_type: TaskType,
    inputs: list[str],
    datasheets: dict[str, Datasheet],
    azure: AzureStorageConfig,
    policy: LicencePolicy,
) -> DataRights:
    """The datasheets of the inputs (`ingest.inputs`, with the config's `ingest.datasheets`),
    once the policy allows every licence (LicenceRefused names each input it refuses, with its
    licence)."""
    files = expand_inputs(inputs, azure, task_type, allow_empty=True)
    rights = read_rights(files, datasheets, azure)
    verdict = judge_licences(rights, policy)
    if verdict.refused:
        raise LicenceRefused(verdict.message())
    for uri in verdict.flagged:
        log.warning("rights: %s has no licence in its datasheet: the reviewer is told", uri)
    return rights


@task(name="rights", cache_policy=NONE)
def rights_task(
    task_type: TaskType,
    inputs: list[str],
    datasheets: dict[str, Datasheet],
    azure: AzureStorageConfig,
    policy: LicencePolicy,
) -> DataRights:
    """Read every input's datasheet and stop the run on a licence the policy refuses."""
    rights = check_rights(task_type, inputs, datasheets, azure, policy)
    create_markdown_artifact(key="data-rights", markdown=rights_markdown(rights))
    return rights
