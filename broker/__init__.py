"""The bundled reference broker: one asyncio process, one listener per protocol personality.

It is a second, independent implementation of each spec: nothing here imports ``protocols``,
``strategies`` or ``suites``.
"""
