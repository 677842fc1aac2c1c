"""Issue 42 item 3: every input carries a datasheet (source, licence as an SPDX id, owner,
basis) from the config, a sidecar file or a datasets folder's card; `approval.licences` refuses
licences before anything is screened; an input without one is flagged to the reviewer; the
licences are in the review, the signed approval record, the lineage and the model card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.config import ConfigError, validate_config
from platforms.approvals import ApprovalMode, ApprovalRecord
from platforms.blob import AzureStorageConfig
from platforms.datasheet import DataRights, Datasheet, InputRights
from platforms.lineage import Lineage
from platforms.manifest import DatasetRef
from screening.report import ScreenReport
from tasks.licences import LicencePolicy, judge_licences
from tasks.model_card import model_card
from tasks.records import TaskType
from tasks.review import review_markdown
from tasks.rights import LicenceRefused, check_rights

AZURE = AzureStorageConfig()
COMMERCIAL = LicencePolicy(refuse=["non-commercial"])


def _inputs(tmp_path: Path) -> dict[str, Path]:
    """A forum dump under CC-BY-NC-4.0 (its sidecar), tickets with no datasheet, and a
    datasets folder whose card says CC-BY-4.0."""
    forum = tmp_path / "forum.jsonl"
    forum.write_text('{"id": "f1", "question": "q", "context": "c q", "answers": {}}\n')
    (tmp_path / "forum.jsonl.datasheet.yaml").write_text(
        "source: https://forum.example.com/export\nlicense: cc-by-nc-4.0\n"
        "owner: community@example.com\nbasis: public posts\n"
    )
    tickets = tmp_path / "tickets.jsonl"
    tickets.write_text(forum.read_text())
    folder = tmp_path / "faq"
    folder.mkdir(exist_ok=True)
    (folder / "state.json").write_text(json.dumps({"_data_files": []}))
    (folder / "README.md").write_text(
        "---\nlicense: cc-by-4.0\nsource_datasets:\n- original\n---\n# FAQ\n"
    )
    return {"forum": forum, "tickets": tickets, "faq": folder}


def _rights(tmp_path: Path, policy: LicencePolicy, **datasheets: dict) -> DataRights:
    paths = _inputs(tmp_path)
    sheets = {str(paths[k]): Datasheet.model_validate(v) for k, v in datasheets.items()}
    inputs = [str(p) for p in paths.values()]
    return check_rights(TaskType.extractive_qa, inputs, sheets, AZURE, policy)


def test_datasheets_come_from_the_sidecar_the_card_and_the_config_which_wins(
    tmp_path: Path,
) -> None:
    rights = _rights(tmp_path, LicencePolicy(), forum={"owner": "legal@example.com"})
    by_name = {Path(i.input).name: i for i in rights.inputs}
    forum = by_name["forum.jsonl"]
    assert forum.licence == "CC-BY-NC-4.0"  # the sidecar's, in SPDX's case
    assert forum.datasheet.source == "https://forum.example.com/export"
    assert forum.datasheet.owner == "legal@example.com"  # the config's entry wins
    assert forum.found_in == [str(tmp_path / "forum.jsonl.datasheet.yaml"), "config"]
    assert by_name["faq"].licence == "CC-BY-4.0" and by_name["faq"].datasheet.source == "original"
    assert by_name["tickets.jsonl"].licence is None and rights.unlicensed == [
        str(tmp_path / "tickets.jsonl")
    ]


def test_a_non_commercial_input_is_refused_under_a_commercial_policy(tmp_path: Path) -> None:
    with pytest.raises(LicenceRefused) as refused:
        _rights(tmp_path, COMMERCIAL)
    message = str(refused.value)
    assert str(tmp_path / "forum.jsonl") in message and "CC-BY-NC-4.0" in message
    assert "approval.licences.refuse: non-commercial" in message
    assert "faq" not in message and "tickets" not in message  # only what is refused is named
    # an allow list refuses what it does not name; an input without a licence can be refused too
    rights = _rights(tmp_path, LicencePolicy())
    verdict = judge_licences(rights, LicencePolicy(allow=["CC-BY-4.0", "CC-BY-NC-*"]))
    assert verdict.refused == {} and verdict.flagged == [str(tmp_path / "tickets.jsonl")]
    verdict = judge_licences(rights, LicencePolicy(allow=["CC-BY-4.0"], unlicensed="refuse"))
    assert set(verdict.refused) == {str(tmp_path / "forum.jsonl"), str(tmp_path / "tickets.jsonl")}


def test_licences_are_spdx_ids_or_the_config_exits_naming_the_field() -> None:
    with pytest.raises(ConfigError) as bad:
        validate_config({"ingest": {"inputs": [{"path": "a.jsonl", "licence": "CC-NC"}]}})
    assert "ingest.datasheets.a.jsonl.licence" in str(bad.value) and "LicenseRef-" in str(bad.value)
    with pytest.raises(ConfigError, match=r"approval\.licences\.refuse"):
        validate_config({"approval": {"licences": {"refuse": ["NC"]}}})
    config = validate_config(
        {"ingest": {"inputs": [{"path": "a.jsonl", "licence": "mit or apache-2.0"}, "b.jsonl"]}}
    )
    assert config.ingest.inputs == ["a.jsonl", "b.jsonl"]
    assert config.ingest.datasheets["a.jsonl"].licence == "MIT OR Apache-2.0"


def _screened() -> tuple[DatasetRef, ScreenReport]:
    dataset = DatasetRef(
        uri="store/datasets/screen/k", stage="screen", task="extractive-qa", key="k",
        content_hash="c" * 64, counts={},
    )  # fmt: skip
    report = ScreenReport(
        task="extractive-qa", records_in=1, kept=1, redacted=0, quarantined=0, flagged=0,
        entities=[], quarantine_reasons={}, flagged_ids=[], samples=[], toxicity_threshold=0.8,
    )  # fmt: skip
    return dataset, report


def test_the_review_shows_each_inputs_licence_and_flags_one_without(tmp_path: Path) -> None:
    rights = _rights(tmp_path, LicencePolicy())
    dataset, report = _screened()
    page = review_markdown(dataset, report, [], None, rights=rights)
    assert "### Inputs and their rights (3)" in page
    assert f"`{tmp_path / 'forum.jsonl'}`: licence **CC-BY-NC-4.0**" in page
    assert "> **No licence:**" in page and f"`{tmp_path / 'tickets.jsonl'}` has no licence" in page


def test_the_signed_record_carries_the_datasheets_and_older_records_still_verify() -> None:
    key = b"k" * 32
    fields = dict(
        decision="approved", reviewer="dana", comment="", decided_at="2026-11-29T10:00:00",
        mode=ApprovalMode.manual, dataset_uri="u", dataset_hash="d" * 64, report_hash="r" * 64,
        flow_run_id=None,
    )  # fmt: skip
    older = ApprovalRecord(**fields).signed(key)  # as a release before datasheets signed it
    assert "inputs" not in older.model_dump_json()
    assert older.problem(key, "d" * 64) is None
    sheet = InputRights(input="forum.jsonl", datasheet=Datasheet(licence="CC-BY-NC-4.0"))
    record = ApprovalRecord(**fields, inputs=[sheet]).signed(key)
    assert record.problem(key, "d" * 64) is None
    edited = record.model_copy(
        update={"inputs": [sheet.model_copy(update={"datasheet": Datasheet(licence="MIT")})]}
    )
    assert "signature does not match" in (edited.problem(key, "d" * 64) or "")


def test_the_model_card_and_the_registry_tags_list_the_inputs_licences() -> None:
    inputs = [
        InputRights(
            input="/data/forum.jsonl",
            datasheet=Datasheet(licence="CC-BY-4.0", source="forum export", basis="public"),
        ),
        InputRights(input="/data/tickets.jsonl"),
    ]
    lineage = Lineage(datasets={"split": "3" * 64}, inputs=inputs)
    card = model_card("helpdesk-qa", "extractive-qa", "packaged:all-MiniLM-L6-v2", lineage)
    assert "## Data rights" in card and "Licences of the training data: CC-BY-4.0, none." in card
    assert "| `forum.jsonl` | CC-BY-4.0 | forum export | - | public |" in card
    assert "| `tickets.jsonl` | **none** |" in card
    assert lineage.tags()["data.licences"] == "CC-BY-4.0, none"
    assert lineage.tags()["data.sources"] == "forum export"
    # a version registered before datasheets: its record reads and writes back as it was
    assert "inputs" not in Lineage(datasets={"split": "3" * 64}).model_dump_json()
