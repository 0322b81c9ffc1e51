"""The text a failing case shows: case, clause, expected vs actual, the conversation, one command to reproduce."""

from __future__ import annotations

from collections.abc import Sequence

from wirecheck.protocols.verdicts import Differs, Divergence, Verdict


def render_failure(state, verdict: Verdict, div: Divergence, reproduce: str | None, notes: Sequence[str] = ()) -> str:
    """``state``: the case (its id, protocol, target and transcript); ``verdict``: what the runner judged it."""
    clause = div.clause
    lines = [
        f"wirecheck {verdict.value} {state.case_id}" + (f" (violates {clause.id})" if clause.id != state.case_id
                                                        else ""),
        f"  clause    [{clause.level.value}] {clause.requirement}",
        f"  source    {clause.source}",
    ]
    if isinstance(div, Differs):
        lines.append(f"  differs   at {div.path} (target vs the reference broker on the same conversation)")
    if getattr(div, "step", None):  # protocols.verdicts.TargetDied
        lines.append(f"  died      {div}")
    if clause.decision:
        lines.append(f"  decision  {clause.decision}")
    lines += [
        f"  expected  {div.expected}",
        f"  actual    {div.actual}",
    ]
    if div.note:
        lines.append(f"  note      {div.note}")
    if state.info is not None:
        lines.append(f"  target    {state.spec.name} at {state.info.text}" + (" (reference broker)" if state.info.reference else ""))
    lines.append(f"  reproduce {reproduce}")
    for note in notes:
        lines.append("  " + note.replace("\n", "\n  "))
    lines.append("  conversation (hex and decoded):")
    lines += ["    " + row for row in state.transcript.render().splitlines()]
    return "\n".join(lines)
