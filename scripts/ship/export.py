"""Write PR material for every patch but the backports, and an issue draft for every ``Issue-Draft`` trailer.

Per PR: title, body, the mbox for ``git am`` without runguard's own trailers, a range-diff when it changed.

Everything is rendered in a scratch directory first; the export directory is replaced only when all of it succeeded.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

from scripts.series.common import markdown_table
from scripts.series.errors import RunguardError
from scripts.series.git import run_git
from scripts.series.listing import Series
from scripts.series.patch import RUNGUARD_TRAILERS, Patch
from scripts.series.repro import read_reproduction
from scripts.ship.checklist import Check, render_before_sending
from scripts.ship.issues import issue_draft
from scripts.ship.prbody import IMPACT, ISSUES_DIR, REVIEW_FOCUS, pr_body, pr_title
from scripts.ship.rangediff import RECORD_DIR, previous_series, range_diffs, record_export
from scripts.validate.repro import ReproRecord

_IDENTITY = re.compile(r"[^<>\n]+ <[^<>\s]+@[^<>\s]+>")
INDEX_HEADER = ("patch", "upstream status", "depends on", "issue drafts", "since last export", "what to do")


def _action(patch: Patch, since: str, step: int | None) -> str:
    state, detail = patch.upstream_state
    if state == "applied upstream":
        return f"backport: never sent; drop it when the base has it (upstream: {detail})"
    if state == "forwarded":
        return f"update {detail} (see range-diff.txt)" if since == "changed" else f"forwarded as {detail}"
    if step is None:
        return f"wait: send once the maintainers decided on issue {patch.waits_for}"
    return f"send now as a new PR (step {step} of the plan)"


def submission_steps(series: Series) -> dict[str, int]:
    """The step of each PR sent now, in series order; a PR sent now must not depend on one that waits."""
    steps: dict[str, int] = {}
    for patch in series.exportable:
        if patch.waits_for is not None or patch.upstream_state[0] != "not forwarded":
            continue
        for dependency in series.dependencies(patch):
            if dependency.waits_for is not None:
                raise RunguardError(
                    f"{patch.name}: sent now, but it depends on {dependency.name}, which waits for issue "
                    f"{dependency.waits_for} (give it 'Submission: waits for {dependency.waits_for}' too)"
                )
        steps[patch.name] = len(steps) + 1
    return steps


def _since(patch: Patch, previous: Series | None, diffs: dict[str, str]) -> str:
    if previous is None:
        return "no earlier version exported"
    if patch.name in diffs:
        return "changed"
    return "unchanged" if patch.name in {old.name for old in previous.patches} else "new"


def upstream_mbox(patch: Patch, author: str | None) -> str:
    """The patch file without runguard's own trailers (``Fixes``/``Refs`` stay): what upstream should see.

    ``author`` ("Name <email>", the submitter's identity, which upstream's CLA check looks for) replaces the
    series' own ``From:`` header; ``None`` keeps it.
    """
    text = patch.path.read_text()
    message, separator, rest = text.partition("\n---\n")
    own = tuple(f"{name.lower()}:" for name in RUNGUARD_TRAILERS)
    kept = [line for line in message.split("\n") if not line.lower().startswith(own)]
    if author is not None:  # in the mail headers only, which end at the first blank line
        headers = kept.index("")
        kept = [f"From: {author}" if line.startswith("From: ") else line for line in kept[:headers]] + kept[headers:]
    while kept and not kept[-1].strip():  # no blank line left where the trailer block was
        kept.pop()
    return "\n".join(kept) + separator + rest


def submitter(repo: Path, given: str | None) -> str | None:
    """Who signs the exported mboxes: ``given`` ("Name <email>"), else git's user in ``repo``.

    None when neither is set: the series' own author stays.
    """
    if given is not None:
        if not _IDENTITY.fullmatch(given):
            raise RunguardError(f"--author: {given!r} is not 'Name <email>'")
        return given
    name, email = (run_git("config", key, cwd=repo, check=False).stdout.strip() for key in ("user.name", "user.email"))
    return f"{name} <{email}>" if name and email else None


def check_sources(series: Series) -> None:
    """Fail early, before any check runs, when an exported patch lacks its PR prose, a dependency or an issue draft."""
    for patch in series.exportable:
        patch.pr_section(IMPACT)
        patch.pr_section(REVIEW_FOCUS)
        series.dependencies(patch)
        for slug in patch.issue_drafts:
            read_reproduction(series.repro_dir, slug)
        if patch.waits_for is not None:
            read_reproduction(series.repro_dir, patch.waits_for)
    submission_steps(series)


def export_series(  # noqa: PLR0913 (the export's inputs: the series, where, the evidence, the bases)
    series: Series,
    export_dir: Path,
    checks: dict[str, list[Check]],
    base_repo: Path,
    *,
    bases: list[str],
    record: ReproRecord | None,
    author: str | None = None,
) -> list[dict[str, str]]:
    """Export ``series`` into ``export_dir`` (``record``: the repro session's runs); one summary row per patch.

    ``author`` signs every mbox (see :func:`upstream_mbox`).
    """
    previous = previous_series(export_dir, series)
    diffs = range_diffs(base_repo, previous, series) if previous else {}
    steps = submission_steps(series)
    export_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, str]] = []
    with tempfile.TemporaryDirectory(prefix=".export-", dir=export_dir) as scratch:
        staged = Path(scratch)
        (staged / ISSUES_DIR).mkdir()
        for patch in series.patches:
            since = _since(patch, previous, diffs)
            dependencies = series.dependencies(patch)
            if not patch.is_backport:
                folder = staged / patch.stem
                folder.mkdir()
                (folder / "title.txt").write_text(pr_title(patch) + "\n")
                repros = [read_reproduction(series.repro_dir, slug) for slug in patch.issue_drafts]
                titles = {repro.slug: repro.title for repro in repros}
                (folder / "body.md").write_text(pr_body(patch, dependencies, checks.get(patch.name, []), titles))
                (folder / "before-sending.md").write_text(render_before_sending(checks.get(patch.name, [])))
                (folder / patch.name).write_text(upstream_mbox(patch, author))
                if patch.name in diffs:
                    (folder / "range-diff.txt").write_text(diffs[patch.name])
                for repro in repros:
                    (staged / ISSUES_DIR / f"{repro.slug}.md").write_text(issue_draft(repro, bases, record))
            state, detail = patch.upstream_state
            rows.append(
                {
                    "patch": patch.name,
                    "title": pr_title(patch),
                    "upstream status": patch.upstream_status,
                    "upstream state": state,
                    "upstream detail": detail,
                    "fixes": " ".join(patch.values("Fixes")),
                    "refs": " ".join(patch.values("Refs")),
                    "depends on": " ".join(dependency.name for dependency in dependencies),
                    "issue drafts": " ".join(patch.issue_drafts),
                    "exported": "no (backport)" if patch.is_backport else "yes",
                    "sha256": patch.sha256(),
                    "since last export": since,
                    "what to do": _action(patch, since, steps.get(patch.name)),
                    "waits for": patch.waits_for or "",
                }
            )
        summary = {"series_hash": series.digest(), "patches": rows}
        (staged / "series.json").write_text(json.dumps(summary, indent=2) + "\n")
        (staged / "index.md").write_text(_index_markdown(rows, author))
        for old in export_dir.iterdir():
            if old.name != RECORD_DIR and old != staged:
                shutil.rmtree(old) if old.is_dir() else old.unlink()
        for new in staged.iterdir():
            new.rename(export_dir / new.name)
    record_export(export_dir, series, previous)
    return rows


def _index_markdown(rows: list[dict[str, str]], author: str | None) -> str:
    """The submission plan (what is sent now, in order; what waits for which issue), then the table of patches."""
    signed = (
        f"The mboxes are signed by {author}."
        if author
        else (
            "The mboxes keep the series' placeholder author: export again with `-- --author 'Name <email>'` (the"
            " submitter, whom upstream's CLA check looks for) before sending."
        )
    )
    plan = [
        "# Submission plan",
        "",
        "Send in this order, each a PR of its own once a maintainer has marked its issue ready-for-implementation"
        " (CONTRIBUTING asks for that): post the issue draft first, where its header says; the draft names the"
        " choice the PR makes, and the PR changes before it is opened if the answer is another:",
        "",
    ]
    now = [row for row in rows if row["what to do"].startswith("send now")]
    plan += [f"{step}. `{row['patch']}`: {row['title']}" for step, row in enumerate(now, 1)] or ["(none)"]
    waiting: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        if row["waits for"]:
            waiting.setdefault(row["waits for"], []).append(row)
    if waiting:
        heading = (
            "Wait for the maintainers' decision on the issue, which these PRs do not settle (post its draft first,"
            " where its header says):"
        )
        plan += ["", heading, ""]
        plan += [
            f"- issue `{slug}`: " + ", ".join(f"`{row['patch']}` ({row['title']})" for row in waiting[slug])
            for slug in waiting
        ]
    plan += ["", signed]
    table = markdown_table(INDEX_HEADER, [[row[key] for key in INDEX_HEADER] for row in rows])
    return "\n".join([*plan, "", "# Patches", "", *table]) + "\n"
