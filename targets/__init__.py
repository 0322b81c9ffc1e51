"""How the suite reaches a server: sessions with deadlines, probing, the pytest plugin, the reference broker."""
