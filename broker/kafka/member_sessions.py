"""Member sessions of the KIP-848 and KIP-932 coordinators: a member that sends no heartbeat within the session
timeout is removed and its group's epoch bumped (KIP-848 'Member session'; KIP-932 uses the same rule)."""

from __future__ import annotations

import asyncio


class MemberSessions:
    """Mixed into a coordinator with ``session_timeout_ms`` and its own ``_remove(group, member)`` and
    ``_bump(group)``; its members carry ``member_id`` and ``session_timer``."""

    session_timeout_ms: int

    def _touch(self, group, member) -> None:
        """A heartbeat: the member's session starts over."""
        if member.session_timer is not None:
            member.session_timer.cancel()
        member.session_timer = asyncio.get_running_loop().call_later(
            self.session_timeout_ms / 1000, self._expire, group, member.member_id)

    def _expire(self, group, member_id: str) -> None:
        member = group.members.get(member_id)
        if member is not None:
            self._remove(group, member)
            self._bump(group)
