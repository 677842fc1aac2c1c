"""The evaluation as Prefect shows it, in a real headless Chromium at 1280x800 (the page fixture
of tests/flows/test_ui_approval.py): the examples table with question, reference, base,
candidate and champion fits the screen, and the loss curve is a picture, not a table."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

import pytest
from prefect import flow, task
from prefect.artifacts import create_markdown_artifact

from platforms.evaluation import EvalReport
from tasks.evaluation_report import loss_curve_markdown, report_markdown
from tests.flows.test_ui_approval import page  # noqa: F401 (the Chromium page fixture)
from tests.tasks.test_evaluate import passed_report

pytestmark = pytest.mark.slow

CONTEXT = "Ticket 4: the VPN gateway in the Porto office dropped every session after the update"


def _report() -> EvalReport:
    long = "The VPN gateway dropped every session after the firmware update " * 4
    return passed_report(
        "f1",
        test_records=3,
        base={"f1": 6.1, "exact_match": 0.0},
        candidate={"f1": 71.2, "exact_match": 66.7},
        champion={"f1": 58.8, "exact_match": 33.3},
        champion_version=2,
        examples=[
            {
                "question": f"What did the gateway do? ({CONTEXT})",
                "reference": "dropped every session",
                "base": "Ticket 4: the VPN gateway in the Porto office " * 3,
                "candidate": long,
                "champion": "https://status.example.com/incidents/" + "a1b2c3d4" * 12,
            }
        ]
        * 3,
    )


# how far the last column of any table reaches past the artifact's text column (px)
_OVERFLOW = """Math.max(...[...document.querySelectorAll('article table')].map(table => {
    const cells = [...table.querySelectorAll('tr')].flatMap(row => [...row.children]);
    const last = Math.max(...cells.map(cell => cell.getBoundingClientRect().right));
    return last - table.closest('article').getBoundingClientRect().right;
}))"""


@task(name="evaluate")
def _evaluate() -> dict[str, UUID]:
    """The evaluate task's two artifacts, as it makes them."""
    curve = [{"step": 10 * s, "loss": 3.0 / s + 0.1} for s in range(1, 21)]
    picture = loss_curve_markdown(curve)
    assert picture is not None
    return {
        "evaluation": create_markdown_artifact(
            key="evaluation", markdown=report_markdown(_report())
        ),
        "loss-curve": create_markdown_artifact(key="loss-curve", markdown=picture),
    }


@flow(name="evaluation-artifacts")
def _publish() -> dict[str, UUID]:
    return _evaluate()


def test_the_evaluation_fits_1280_px_and_the_loss_curve_is_a_picture(
    prefect_server: dict[str, str],
    page,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    from playwright.sync_api import expect

    latest = _publish()
    ui = prefect_server["PREFECT_UI_URL"]
    page.set_viewport_size({"width": 1280, "height": 800})

    page.goto(f"{ui}/artifacts/artifact/{latest['evaluation']}")
    table = page.locator("table", has_text="candidate").last
    expect(table).to_contain_text("question")
    expect(table).to_contain_text("champion")
    table.scroll_into_view_if_needed()
    shot = tmp_path / "evaluation.png"
    page.screenshot(path=str(shot))
    # every column whole inside the page's text column: none cut at its edge, none scrolled to
    overflow = page.evaluate(_OVERFLOW)
    assert overflow <= 1, f"the evaluation's tables run {overflow} px past the text column"
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280

    page.goto(f"{ui}/artifacts/artifact/{latest['loss-curve']}")
    picture = page.get_by_role("img", name="Training loss by step")
    expect(picture).to_be_visible()
    drawn = picture.evaluate("img => img.complete && img.naturalWidth")
    assert drawn and drawn > 100, "the loss curve's picture did not load"
    page.screenshot(path=str(tmp_path / "loss-curve.png"))
    print("evaluation screenshots:", shot, tmp_path / "loss-curve.png")
