"""The lowest layer: what the series is, and the plumbing every other layer uses.

``listing`` reads ``patches/series`` and ``patches/bases``; ``patch`` is the one model of a patch file (parsed
once: subject, body, trailers, file changes, the tests it adds, upstream status, its PR prose); ``errors`` the
one exception type and its one-line formatting; ``git`` runs git safely; ``locations`` says where things live;
``datafiles`` writes ``docs/data`` files with their stamp; ``common`` holds small shared helpers (tables,
markdown sections, test names, hashes); ``repro`` reads an issue reproduction and its draft prose (``repro/``).
"""
