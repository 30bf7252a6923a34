"""The read calls, one module each (the seven reads: locate, look, move, pick, scan,
sniff, query; the lifecycle reads: history, calendar, coverage), the ``harvest``
composite, and the pieces they share (``sweep`` and ``terms`` for term statistics,
``edges`` and ``succession`` for links, ``features`` for ranking switches, ``batch`` for
the batch form of look and pick)."""
